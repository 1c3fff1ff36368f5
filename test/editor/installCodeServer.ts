/**
 * Installs code-server (VS Code's server and web workbench, from npm) once per checkout, into
 * `.vscode-test/code-server-<version>/`. Desktop VS Code cannot be downloaded offline; code-server
 * can, because it comes from the npm registry. Three things make its install work offline and as root:
 *
 * - `@vscode/ripgrep`'s postinstall downloads rg from GitHub: its download cache is seeded with
 *   Debian's `/usr/bin/rg`, so the postinstall finds the archive and never goes online.
 * - `npm_config_unsafe_perm=true`: code-server's postinstall refuses to run as root otherwise.
 * - `npm_config_yes=true`: node-pty's postinstall runs `npx node-gyp`, which would prompt.
 *
 * The install goes to a `.partial` folder that is renamed when complete, so an interrupted install
 * is started over rather than half used.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { codeServerHomeEnv, xdgHomeEnv } from './codeServer';
import { log } from './log';

/** The newest code-server whose `engines.node` is 20; it carries VS Code 1.100.3. */
export const CODE_SERVER_VERSION = '4.100.3';
/** The `@vscode/ripgrep` version that code-server 4.100.3 pins, and the rg release it fetches. */
const RIPGREP_PACKAGE_VERSION = '1.15.11';
const RIPGREP_RELEASE = 'v13.0.0-10';
const RIPGREP_TARGETS: Record<string, string> = {
  x64: 'x86_64-unknown-linux-musl',
  arm64: 'aarch64-unknown-linux-musl',
};
/** Native builds of a cold install take about a minute on 2 cores; allow for slow CI machines. */
const INSTALL_TIMEOUT_MS = 15 * 60_000;

/** Where code-server lives in a checkout. */
export function codeServerDir(repoRoot: string): string {
  return path.join(repoRoot, '.vscode-test', `code-server-${CODE_SERVER_VERSION}`);
}

/** The Node entry point of an installed code-server. */
export function codeServerEntry(repoRoot: string): string {
  return path.join(
    codeServerDir(repoRoot),
    'node_modules',
    'code-server',
    'out',
    'node',
    'entry.js',
  );
}

const STAMP = '.installed';

/** Debian packages the editor tests need, what for, and how to tell that each is there. */
const SYSTEM_PACKAGES: {
  name: string;
  neededFor: 'browser' | 'install';
  present: () => boolean;
}[] = [
  { name: 'chromium', neededFor: 'browser', present: () => onPath('chromium') },
  { name: 'ripgrep', neededFor: 'install', present: () => existsSync('/usr/bin/rg') },
  {
    name: 'libkrb5-dev',
    neededFor: 'install',
    present: () => existsSync('/usr/include/gssapi/gssapi.h'),
  },
  { name: 'pkg-config', neededFor: 'install', present: () => onPath('pkg-config') },
  { name: 'build-essential', neededFor: 'install', present: () => onPath('g++') && onPath('make') },
  { name: 'python3', neededFor: 'install', present: () => onPath('python3') },
];

function onPath(command: string): boolean {
  return spawnSync('/bin/sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Debian packages that are missing for running the tests (`browser`) or installing code-server. */
export function missingSystemPackages(purpose: 'browser' | 'install'): string[] {
  return SYSTEM_PACKAGES.filter((p) => p.neededFor === purpose && !p.present()).map((p) => p.name);
}

/** Throws an error that says how to install the missing Debian packages, if any are missing. */
export function assertSystemPackages(purpose: 'browser' | 'install'): void {
  const missing = missingSystemPackages(purpose);
  if (missing.length) {
    const what =
      purpose === 'browser'
        ? 'to run the editor tests'
        : 'to install code-server for the editor tests';
    throw new Error(
      `Missing system packages ${what}: ${missing.join(', ')}. Run \`bash scripts/ensure-system-deps.sh\` (as root, or with sudo) and try again.`,
    );
  }
}

/** True when a complete install is present. */
export function isCodeServerInstalled(repoRoot: string): boolean {
  return (
    existsSync(path.join(codeServerDir(repoRoot), STAMP)) && existsSync(codeServerEntry(repoRoot))
  );
}

/**
 * Installs code-server unless a complete install is already there. Returns whether it installed.
 * Prints progress while npm works, and the tail of npm's log when it fails.
 */
export async function ensureCodeServer(repoRoot: string): Promise<boolean> {
  if (isCodeServerInstalled(repoRoot)) return false;
  assertSystemPackages('install');
  const target = codeServerDir(repoRoot);
  const partial = `${target}.partial`;
  await fs.rm(partial, { recursive: true, force: true });
  await fs.mkdir(partial, { recursive: true });
  const tmp = path.join(partial, 'tmp');
  await seedRipgrepCache(tmp);
  await fs.writeFile(
    path.join(partial, 'package.json'),
    JSON.stringify(
      {
        name: 'rehearsal-editor-test-host',
        private: true,
        description:
          'code-server for the editor tests; installed by test/editor/installCodeServer.ts',
      },
      null,
      2,
    ),
  );

  log(
    `installing code-server ${CODE_SERVER_VERSION} into ${path.relative(repoRoot, target)} (once; native builds take a minute or two)`,
  );
  const logFile = path.join(partial, 'npm-install.log');
  await runNpmInstall(partial, tmp, logFile);

  const entry = path.join(partial, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  const version = spawnSync(process.execPath, [entry, '--version'], {
    encoding: 'utf8',
    env: { ...process.env, ...codeServerHomeEnv(tmp) },
  });
  const versionLine = version.stdout
    .split('\n')
    .find((l) => l.startsWith(`${CODE_SERVER_VERSION} `));
  if (version.status !== 0 || !versionLine) {
    throw new Error(
      `code-server was installed but does not start: ${(version.stderr || version.stdout).trim()}. See ${logFile}.`,
    );
  }
  await fs.rm(tmp, { recursive: true, force: true });
  await fs.rm(target, { recursive: true, force: true });
  await fs.rename(partial, target);
  await fs.writeFile(
    path.join(target, STAMP),
    `code-server ${versionLine}\ninstalled ${new Date().toISOString()}\n`,
  );
  log(`code-server ${versionLine} installed`);
  return true;
}

/** Puts Debian's rg where `@vscode/ripgrep`'s postinstall looks for a cached download. */
async function seedRipgrepCache(tmp: string): Promise<void> {
  const target = RIPGREP_TARGETS[os.arch()];
  if (process.platform !== 'linux' || !target) {
    throw new Error(
      `The offline code-server install supports Linux x64 and arm64, not ${process.platform} ${os.arch()}.`,
    );
  }
  const cache = path.join(tmp, `vscode-ripgrep-cache-${RIPGREP_PACKAGE_VERSION}`);
  const staging = path.join(tmp, 'rg-staging');
  await fs.mkdir(cache, { recursive: true });
  await fs.mkdir(staging, { recursive: true });
  await fs.copyFile('/usr/bin/rg', path.join(staging, 'rg'));
  const archive = path.join(cache, `ripgrep-${RIPGREP_RELEASE}-${target}.tar.gz`);
  const tar = spawnSync('tar', ['czf', archive, '-C', staging, 'rg'], { encoding: 'utf8' });
  if (tar.status !== 0) throw new Error(`Could not seed the ripgrep cache: ${tar.stderr.trim()}`);
}

function runNpmInstall(cwd: string, tmp: string, logFile: string): Promise<void> {
  const env = {
    ...process.env,
    TMPDIR: tmp,
    ...xdgHomeEnv(tmp),
    npm_config_unsafe_perm: 'true',
    npm_config_yes: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  return new Promise((resolve, reject) => {
    const out = createWriteStream(logFile);
    const npm = spawn(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--foreground-scripts',
        '--loglevel',
        'http',
        `code-server@${CODE_SERVER_VERSION}`,
      ],
      { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let lastLine = '';
    const keep = (chunk: Buffer) => {
      out.write(chunk);
      const lines = chunk
        .toString('utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
      if (lines.length) lastLine = lines[lines.length - 1];
    };
    npm.stdout.on('data', keep);
    npm.stderr.on('data', keep);
    const t0 = Date.now();
    const heartbeat = setInterval(
      () =>
        log(
          `  still installing code-server (${Math.round((Date.now() - t0) / 1000)}s): ${lastLine.slice(0, 100)}`,
        ),
      15_000,
    );
    const timeout = setTimeout(() => npm.kill('SIGTERM'), INSTALL_TIMEOUT_MS);
    npm.on('error', (err) => finish(() => new Error(`Could not run npm: ${err.message}`)));
    npm.on('close', (code, signal) => {
      finish(
        code === 0
          ? undefined
          : () =>
              new Error(
                `npm install code-server@${CODE_SERVER_VERSION} failed (${signal ?? `exit ${code}`}); its log is ${logFile}:\n${tail(logFile)}`,
              ),
      );
    });
    let finished = false;
    // The error is built once the log is flushed, so that it can quote the log's tail.
    function finish(error: (() => Error) | undefined) {
      if (finished) return;
      finished = true;
      clearInterval(heartbeat);
      clearTimeout(timeout);
      out.end(() => (error ? reject(error()) : resolve()));
    }
  });
}

function tail(file: string, lines = 30): string {
  const text = spawnSync('tail', ['-n', String(lines), file], { encoding: 'utf8' }).stdout ?? '';
  return text.replace(/^/gm, '  | ');
}
