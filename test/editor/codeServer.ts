/**
 * Starts and stops code-server for one test session: a free loopback port, no auth, and a fresh
 * user-data folder with settings that keep the workbench quiet (no welcome page, no telemetry, no
 * update checks). Workspace trust is off (the fixture workspaces are made by the harness itself),
 * except in a session that checks what the studio does in an untrusted workspace.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createWriteStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { freePort, stopProcess, track, waitForHttp } from './processes';

/** Settings of the session's user-data folder. */
export const WORKBENCH_SETTINGS: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'chat.commandCenter.enabled': false,
  'git.enabled': false,
  'window.commandCenter': false,
  // Keep call diffs side by side (rehearsed left, actual right) even in a narrow window.
  'diffEditor.useInlineViewWhenSpaceIsLimited': false,
  'diffEditor.hideUnchangedRegions.enabled': false,
  // The fixture workspace holds only traces; the file watcher must still see them appear.
  'files.watcherExclude': {},
};

/** Options of {@link startCodeServer}. */
export interface CodeServerOptions {
  /** code-server's `out/node/entry.js`. */
  entry: string;
  /** Folder for this session's user data, extensions and log (created). */
  sessionDir: string;
  /** Extra environment for code-server and its extension host. */
  env?: Record<string, string>;
  /** How long to wait for `/healthz`. */
  startTimeoutMs?: number;
  /**
   * Whether workspace trust is on. When it is, a folder opens in Restricted Mode (untrusted) and
   * nobody is asked to trust it.
   */
  workspaceTrust?: boolean;
}

/** Settings that turn workspace trust on and leave every folder untrusted without asking. */
const UNTRUSTED_SETTINGS: Record<string, unknown> = {
  'security.workspace.trust.enabled': true,
  'security.workspace.trust.startupPrompt': 'never',
  'security.workspace.trust.banner': 'always',
  'security.workspace.trust.emptyWindow': false,
};

/** A running code-server. */
export interface CodeServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Authority for `vscode-remote://` URIs of files on this server. */
  authority: string;
  /** code-server's own log (stdout and stderr). */
  logFile: string;
  stop(): Promise<void>;
}

/** Starts code-server and resolves once `/healthz` answers. */
export async function startCodeServer(options: CodeServerOptions): Promise<CodeServer> {
  const userData = path.join(options.sessionDir, 'user-data');
  await fs.mkdir(path.join(userData, 'User'), { recursive: true });
  await fs.writeFile(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify(
      { ...WORKBENCH_SETTINGS, ...(options.workspaceTrust ? UNTRUSTED_SETTINGS : {}) },
      null,
      2,
    ),
  );
  const logFile = path.join(options.sessionDir, 'code-server.log');

  // The port may be taken between choosing it and binding it: try a few.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        options.entry,
        '--auth',
        'none',
        '--bind-addr',
        `127.0.0.1:${port}`,
        '--user-data-dir',
        userData,
        '--extensions-dir',
        path.join(options.sessionDir, 'extensions'),
        '--disable-telemetry',
        '--disable-update-check',
        ...(options.workspaceTrust ? [] : ['--disable-workspace-trust']),
        '--disable-getting-started-override',
        '--ignore-last-opened',
      ],
      {
        env: { ...process.env, ...codeServerHomeEnv(options.sessionDir), ...options.env },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    track(child);
    const out = createWriteStream(logFile, { flags: 'a' });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitForHttp(`${url}/healthz`, options.startTimeoutMs ?? 60_000, () =>
        exitReason(child, logFile),
      );
      return { url, authority: `127.0.0.1:${port}`, logFile, stop: () => stopProcess(child) };
    } catch (err) {
      lastError = err;
      await stopProcess(child);
    }
  }
  throw new Error(`code-server did not start: ${(lastError as Error).message}`);
}

/**
 * Installs a `.vsix` into a session's extensions folder, as a user does with
 * `code-server --install-extension`; resolves with the installed extension's folder.
 */
export async function installExtension(
  entry: string,
  sessionDir: string,
  vsix: string,
  timeoutMs = 120_000,
): Promise<string> {
  const extensionsDir = path.join(sessionDir, 'extensions');
  await fs.mkdir(extensionsDir, { recursive: true });
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        entry,
        '--user-data-dir',
        path.join(sessionDir, 'user-data'),
        '--extensions-dir',
        extensionsDir,
        '--install-extension',
        vsix,
      ],
      {
        env: { ...process.env, ...codeServerHomeEnv(sessionDir) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    track(child);
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`code-server --install-extension did not end in ${timeoutMs / 1000} s:\n${text}`),
      );
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(text);
      else reject(new Error(`code-server --install-extension exited with ${code}:\n${text}`));
    });
  });
  const installed = (await fs.readdir(extensionsDir)).filter((d) =>
    d.startsWith('rehearsal-studio.rehearsal-studio-'),
  );
  if (installed.length !== 1)
    throw new Error(
      `the .vsix did not install one extension (${installed.join(', ') || 'none'}):\n${output}`,
    );
  return path.join(extensionsDir, installed[0]);
}

/**
 * Keeps code-server's own files inside `dir`: it would otherwise write a config file with a
 * password into ~/.config/code-server, its logs into ~/.local/share/code-server and a device id
 * into ~/.cache.
 */
export function codeServerHomeEnv(dir: string): Record<string, string> {
  return { CODE_SERVER_CONFIG: path.join(dir, 'config.yaml'), ...xdgHomeEnv(dir) };
}

/** XDG base folders inside `dir`, so that a child process leaves nothing in the home folder. */
export function xdgHomeEnv(dir: string): Record<string, string> {
  return {
    XDG_CONFIG_HOME: path.join(dir, 'xdg-config'),
    XDG_DATA_HOME: path.join(dir, 'xdg-data'),
    XDG_CACHE_HOME: path.join(dir, 'xdg-cache'),
  };
}

function exitReason(child: ChildProcess, logFile: string): string | undefined {
  if (child.exitCode === null && child.signalCode === null) return undefined;
  return `code-server exited (${child.signalCode ?? `exit ${child.exitCode}`}) before it was ready; see ${logFile}`;
}
