/**
 * Headless Chromium (Debian's) driven by playwright-core, pointed at code-server's workbench.
 * Workbench console output (including what the extension host logs) is kept for the failure report.
 */
import { promises as fs } from 'node:fs';
import * as util from 'node:util';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import type { CodeServer } from './codeServer';
import { xdgHomeEnv } from './codeServer';

/** Flags that work headless, as root, with no network beyond loopback. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--disable-features=Translate',
];

/** The browser window size; screenshots have this size. */
export const VIEWPORT = { width: 1400, height: 900 };

/**
 * Launches Chromium (`CHROMIUM` overrides its path). Its crash reports and caches go under
 * `homeDir`, not the home folder.
 */
export function launchBrowser(homeDir: string): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    env: { ...process.env, ...xdgHomeEnv(homeDir) },
    timeout: 60_000,
  });
}

/** What the workbench URL asks for: the folder to open and, as VS Code's `payload`, dev-mode options. */
export interface WorkbenchTarget {
  folder: string;
  /**
   * Loads the extension from this folder, as `--extensionDevelopmentPath` would; without it the
   * workbench runs the extensions installed in the session (the packaged phase).
   */
  extensionDevelopmentPath?: string;
  /** Runs this test entry (its `run()`) in the extension host, as `--extensionTestsPath` would. */
  extensionTestsPath?: string;
}

/**
 * The workbench URL for a target. code-server's CLI does not take the dev-mode flags, but the web
 * workbench reads them from the `payload` query parameter, as `vscode-remote://` URIs.
 */
export function workbenchUrl(server: CodeServer, target: WorkbenchTarget): string {
  const remote = (p: string) => `vscode-remote://${server.authority}${p}`;
  const payload: [string, string][] = [];
  if (target.extensionDevelopmentPath)
    payload.push(['extensionDevelopmentPath', remote(target.extensionDevelopmentPath)]);
  if (target.extensionTestsPath)
    payload.push(['extensionTestsPath', remote(target.extensionTestsPath)]);
  const query = `folder=${encodeURIComponent(target.folder)}`;
  return payload.length
    ? `${server.url}/?${query}&payload=${encodeURIComponent(JSON.stringify(payload))}`
    : `${server.url}/?${query}`;
}

/** A browser page with its console captured. */
export interface WorkbenchPage {
  context: BrowserContext;
  page: Page;
  consoleLines: string[];
  /** Writes the captured console to a file. */
  saveConsole(file: string): Promise<void>;
  close(): Promise<void>;
}

/** Opens a fresh browser context (no shared storage between phases) with one page. */
export async function openPage(browser: Browser): Promise<WorkbenchPage> {
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const consoleLines: string[] = [];
  page.on(
    'console',
    (m) =>
      void describeConsoleMessage(m).then((text) => consoleLines.push(`[${m.type()}] ${text}`)),
  );
  page.on('pageerror', (e) => consoleLines.push(`[pageerror] ${e.stack ?? e.message}`));
  return {
    context,
    page,
    consoleLines,
    saveConsole: (file) => fs.writeFile(file, consoleLines.join('\n') + '\n'),
    close: () => context.close().catch(() => undefined),
  };
}

// The workbench forwards extension-host logs with `%c` CSS styling; drop it to keep lines readable.
async function describeConsoleMessage(m: ConsoleMessage): Promise<string> {
  try {
    const args: unknown[] = await Promise.all(m.args().map((a) => a.jsonValue()));
    if (typeof args[0] === 'string' && args[0].includes('%c')) {
      const styles = (args[0].match(/%c/g) ?? []).length;
      args[0] = args[0].replace(/%c/g, '');
      args.splice(1, styles);
    }
    return util.format(...args);
  } catch {
    return m.text();
  }
}
