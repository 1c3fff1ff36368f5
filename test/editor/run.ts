/**
 * The editor-test stage (`node out/test/editor/run.js`, stage `editor` of scripts/test.sh): the
 * extension in a real VS Code extension host, offline.
 *
 * 1. Installs code-server once (see installCodeServer.ts) and builds fixture workspaces.
 * 2. Suite: opens the workbench in headless Chromium with the repository as the extension
 *    development path and `out/test/editor/suite/index.js` as the tests path; the mocha suite runs
 *    inside the extension host and its end arrives as `window.codeAutomationExit(code)`.
 * 3. UI checks: opens the workbench again on a fresh server and drives it like a person does
 *    (uiChecks.ts), with screenshots in `test-results/editor/`.
 *
 * 4. Untrusted: the studio in Restricted Mode.
 * 5. Packaged: the .vsix of `npm run package` installed in a fresh code-server, a copy of
 *    examples/workspace open, sets up its trainer environment from the palette, exports the rows
 *    the workspace's example run file names and trains it (packagedChecks.ts).
 *
 * Exits non-zero when anything fails. Every step has a deadline, and code-server and Chromium are
 * always stopped. Environment: REHEARSAL_EDITOR_GREP (run matching suite tests only),
 * REHEARSAL_EDITOR_ONLY=suite|ui|untrusted|packaged, REHEARSAL_EDITOR_KEEP=1 (keep the fixture folder),
 * REHEARSAL_EDITOR_TIMEOUT_S (whole stage, default 900), CHROMIUM (browser path).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import type { WorkbenchPage } from './browser';
import { launchBrowser, openPage, workbenchUrl } from './browser';
import type { CodeServer } from './codeServer';
import { installExtension, startCodeServer } from './codeServer';
import type { Fixture } from './fixture';
import { createFixture } from './fixture';
import {
  assertSystemPackages,
  codeServerEntry,
  CODE_SERVER_VERSION,
  ensureCodeServer,
} from './installCodeServer';
import { log, timed } from './log';
import { killAllNow } from './processes';
import { resolveTrainerPython } from '../../src/core/training/pythonEnv';
import type { SuiteResults } from './suite/reporter';
import { scriptedModel } from '../support/scriptedModel';
import { withTimeout } from './timeout';
import type { UiCheckResult } from './uiChecks';
import { runUiChecks, runUntrustedChecks } from './uiChecks';
import { runPackagedChecks } from './packagedChecks';
import { Workbench } from './workbench';

const REPO = path.resolve(__dirname, '..', '..', '..');
const RESULTS = path.join(REPO, 'test-results', 'editor');
const SUITE_ENTRY = path.join(REPO, 'out', 'test', 'editor', 'suite', 'index.js');
const STAGE_TIMEOUT_MS = Number(process.env.REHEARSAL_EDITOR_TIMEOUT_S ?? 900) * 1000;
const SUITE_TIMEOUT_MS = 360_000;
const UI_TIMEOUT_MS = 240_000;
const UNTRUSTED_TIMEOUT_MS = 120_000;
/** The packaged phase: Set Up Trainer installs torch with pip (from its cache or index), then the example run. */
const PACKAGED_SETUP_TIMEOUT_MS = 300_000;
const PACKAGED_TIMEOUT_MS = 600_000;
const WORKBENCH_LOAD_MS = 60_000;

const timings: Record<string, number> = {};

/**
 * The development extension (suite and UI phases) trains with the test command's environment, as
 * the unit tests do: `$TRAINER_PYTHON`, else the repository's `.venv`. The packaged phase sets up
 * its own environment from the palette instead.
 */
const devTrainerEnv = (): Record<string, string> => ({
  TRAINER_PYTHON: resolveTrainerPython().python,
});

/** A phase's server and page, stopped whatever happens. */
async function withWorkbench<T>(
  browser: Browser,
  fixture: Fixture,
  phase: string,
  env: Record<string, string>,
  body: (server: CodeServer, page: WorkbenchPage) => Promise<T>,
  workspaceTrust = false,
): Promise<T> {
  const sessionDir = path.join(fixture.root, `${phase}-session`);
  const server = await timed(timings, `${phase}: start code-server`, () =>
    startCodeServer({ entry: codeServerEntry(REPO), sessionDir, env, workspaceTrust }),
  );
  const page = await openPage(browser);
  page.page.setDefaultTimeout(20_000);
  try {
    return await body(server, page);
  } finally {
    await page
      .saveConsole(path.join(RESULTS, `${phase}-browser-console.log`))
      .catch(() => undefined);
    await page.close();
    await server.stop();
    await fs
      .copyFile(server.logFile, path.join(RESULTS, `${phase}-code-server.log`))
      .catch(() => undefined);
  }
}

/** Runs the mocha suite inside the extension host; resolves with its results. */
async function runSuite(browser: Browser, fixture: Fixture): Promise<SuiteResults> {
  const logFile = path.join(RESULTS, 'suite.log');
  const resultsFile = path.join(RESULTS, 'suite-results.json');
  // The unit tests' scripted ONNX model (cached in .vscode-test/test-models; trained here if absent):
  // a policy that rehearses, for private rehearsal and replay from the editor.
  const model = await timed(timings, 'scripted test model', () =>
    scriptedModel((line) => log(line)),
  );
  const env: Record<string, string> = {
    ...devTrainerEnv(),
    REHEARSAL_EDITOR_LOG: logFile,
    REHEARSAL_EDITOR_RESULTS: resultsFile,
    REHEARSAL_EDITOR_MODEL: model,
  };
  if (process.env.REHEARSAL_EDITOR_GREP)
    env.REHEARSAL_EDITOR_GREP = process.env.REHEARSAL_EDITOR_GREP;
  await fs.writeFile(logFile, '');
  return withWorkbench(browser, fixture, 'suite', env, async (server, { page, consoleLines }) => {
    let exited!: (code: number) => void;
    const exit = new Promise<number>((resolve) => (exited = resolve));
    // The workbench calls this when the extension tests are done (VS Code's automation hook).
    await page.exposeFunction('codeAutomationExit', (code: number) => exited(code));
    const follower = followFile(logFile, (line) => console.log(`  │ ${line}`));
    try {
      await page.goto(
        workbenchUrl(server, {
          folder: fixture.suiteWorkspace,
          extensionDevelopmentPath: REPO,
          extensionTestsPath: SUITE_ENTRY,
        }),
      );
      const code = await timed(timings, 'suite: workbench, extension host and tests', () =>
        withTimeout(exit, SUITE_TIMEOUT_MS, 'the extension-host suite'),
      );
      await follower.flush();
      if (!existsSync(resultsFile)) {
        throw new Error(
          `the suite ended (code ${code}) without results: it did not load. Workbench console:\n${tail(consoleLines)}`,
        );
      }
      const results = JSON.parse(await fs.readFile(resultsFile, 'utf8')) as SuiteResults;
      timings['suite: mocha tests alone'] = results.durationMs;
      if (code !== 0 && results.failed === 0)
        throw new Error(
          `the extension host exited with code ${code} although no test failed. Workbench console:\n${tail(consoleLines)}`,
        );
      return results;
    } finally {
      await follower.stop();
    }
  });
}

/** `npm run package`'s .vsix, made once per run of the editor tests (the UI and packaged phases install it). */
let vsixMade: Promise<string> | undefined;
function packagedVsix(fixture: Fixture): Promise<string> {
  vsixMade ??= timed(timings, 'npm run package', async () => {
    const vsix = path.join(fixture.root, 'rehearsal-studio.vsix');
    const built = spawnSync(process.execPath, ['scripts/package.mjs', '--out', vsix], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 180_000,
    });
    if (built.status !== 0)
      throw new Error(
        `npm run package failed (${built.status ?? built.signal}):\n${built.stdout}${built.stderr}`,
      );
    return vsix;
  });
  return vsixMade;
}

/**
 * Drives the workbench through the browser; resolves with each check's result. The extension is
 * the packaged one, installed from the .vsix as a user installs it (issue 27: what ships is what is
 * tested: runs, diffs, marks, review, the panels and training); it trains with the test command's
 * environment.
 */
async function runUi(browser: Browser, fixture: Fixture): Promise<UiCheckResult[]> {
  const model = await scriptedModel((line) => log(line));
  const vsix = await packagedVsix(fixture);
  await timed(timings, 'ui: code-server --install-extension', () =>
    installExtension(codeServerEntry(REPO), path.join(fixture.root, 'ui-session'), vsix),
  );
  return withWorkbench(
    browser,
    fixture,
    'ui',
    devTrainerEnv(),
    async (server, { page, consoleLines }) => {
      await timed(timings, 'ui: load the workbench page', () =>
        page.goto(workbenchUrl(server, { folder: fixture.uiWorkspace })),
      );
      const results = await timed(timings, 'ui: checks in the browser', () =>
        withTimeout(
          runUiChecks(new Workbench(page), {
            screenshots: RESULTS,
            loadTimeoutMs: WORKBENCH_LOAD_MS,
            log: (l) => console.log(l),
            workspace: fixture.uiWorkspace,
            model,
          }),
          UI_TIMEOUT_MS,
          'the UI checks',
        ),
      );
      return [
        ...results,
        ...activationCheck(consoleLines, 'the extension activates without errors'),
      ];
    },
  );
}

/** Drives the workbench on a workspace that is not trusted (Restricted Mode). */
async function runUntrusted(browser: Browser, fixture: Fixture): Promise<UiCheckResult[]> {
  return withWorkbench(
    browser,
    fixture,
    'untrusted',
    {},
    async (server, { page, consoleLines }) => {
      await timed(timings, 'untrusted: load the workbench page', () =>
        page.goto(
          workbenchUrl(server, {
            folder: fixture.untrustedWorkspace,
            extensionDevelopmentPath: REPO,
          }),
        ),
      );
      const results = await timed(timings, 'untrusted: checks in the browser', () =>
        withTimeout(
          runUntrustedChecks(new Workbench(page), {
            screenshots: RESULTS,
            loadTimeoutMs: WORKBENCH_LOAD_MS,
            log: (l) => console.log(l),
            workspace: fixture.untrustedWorkspace,
          }),
          UNTRUSTED_TIMEOUT_MS,
          'the untrusted-workspace checks',
        ),
      );
      return [
        ...results,
        ...activationCheck(
          consoleLines,
          'the extension activates without errors in an untrusted workspace',
        ),
      ];
    },
    true,
  );
}

/**
 * The packaged extension as a user has it: `npm run package`'s .vsix installed into a fresh
 * code-server with `--install-extension`, no development path and no trainer environment (the
 * session's environment does not name one either), then driven through the workbench.
 */
async function runPackaged(browser: Browser, fixture: Fixture): Promise<UiCheckResult[]> {
  const vsix = await packagedVsix(fixture);
  const sessionDir = path.join(fixture.root, 'packaged-session');
  const extensionDir = await timed(timings, 'packaged: code-server --install-extension', () =>
    installExtension(codeServerEntry(REPO), sessionDir, vsix),
  );
  const envDir = path.join(
    sessionDir,
    'user-data',
    'User',
    'globalStorage',
    'rehearsal-studio.rehearsal-studio',
    'trainer-env',
  );
  // TRAINER_PYTHON empty: the launch must find the environment the extension made, not the repository's.
  return withWorkbench(
    browser,
    fixture,
    'packaged',
    { TRAINER_PYTHON: '', REHEARSAL_TRAINER_ENV: '' },
    async (server, { page, consoleLines }) => {
      await timed(timings, 'packaged: load the workbench page', () =>
        page.goto(workbenchUrl(server, { folder: fixture.packagedWorkspace })),
      );
      const results = await timed(timings, 'packaged: checks in the browser', () =>
        withTimeout(
          runPackagedChecks(new Workbench(page), {
            screenshots: RESULTS,
            loadTimeoutMs: WORKBENCH_LOAD_MS,
            log: (l) => console.log(l),
            workspace: fixture.packagedWorkspace,
            extensionDir,
            envDir,
            setupTimeoutMs: PACKAGED_SETUP_TIMEOUT_MS,
          }),
          PACKAGED_TIMEOUT_MS,
          'the packaged-extension checks',
        ),
      );
      return [
        ...results,
        ...activationCheck(consoleLines, 'the installed extension activates without errors'),
      ];
    },
  );
}

/** A failed check named `name` when the workbench console says the extension failed to activate. */
function activationCheck(consoleLines: readonly string[], name: string): UiCheckResult[] {
  const failure = consoleLines.find((l) =>
    /Activating extension 'rehearsal-studio\.rehearsal-studio' failed/.test(l),
  );
  return failure ? [{ name, ok: false, durationMs: 0, error: failure }] : [];
}

async function main(): Promise<number> {
  const t0 = Date.now();
  for (const [file, how] of [
    [path.join(REPO, 'dist', 'extension.js'), 'node scripts/build.mjs'],
    [SUITE_ENTRY, 'npx tsc -p .'],
  ]) {
    if (!existsSync(file))
      throw new Error(`${path.relative(REPO, file)} is missing: run \`${how}\` first.`);
  }
  assertSystemPackages('browser');
  const installed = await timed(timings, `code-server ${CODE_SERVER_VERSION} ready`, () =>
    ensureCodeServer(REPO),
  );
  if (!installed) log(`code-server ${CODE_SERVER_VERSION} already installed in .vscode-test/`);
  await fs.rm(RESULTS, { recursive: true, force: true });
  await fs.mkdir(RESULTS, { recursive: true });
  const fixture = await timed(timings, 'fixture workspaces', createFixture);
  const browser = await timed(timings, 'launch chromium', () =>
    launchBrowser(path.join(fixture.root, 'browser-home')),
  );
  const only = process.env.REHEARSAL_EDITOR_ONLY;
  const problems: string[] = [];
  let suite: SuiteResults | undefined;
  let ui: UiCheckResult[] = [];
  try {
    if (!only || only === 'suite') {
      log('suite: extension-host tests (mocha)');
      try {
        suite = await timed(timings, 'suite phase', () => runSuite(browser, fixture));
        if (suite.failed > 0) {
          // Each failure's title and first line again at the end, where a truncated CI log still shows it.
          const failures = suite.tests
            .filter((t) => t.state === 'failed')
            .map((t) => `\n    ${t.title}: ${(t.error ?? '').split('\n')[0].slice(0, 400)}`);
          problems.push(`${suite.failed} suite test(s) failed:${failures.join('')}`);
        }
        if (suite.passed + suite.failed === 0) problems.push('the suite ran no tests');
      } catch (err) {
        problems.push(`suite: ${(err as Error).message}`);
      }
    }
    if (!only || only === 'ui') {
      log('ui: checks through the workbench DOM (Playwright), the packaged .vsix installed');
      try {
        ui = await timed(timings, 'ui phase', () => runUi(browser, fixture));
        const failed = ui.filter((r) => !r.ok);
        if (failed.length)
          problems.push(`UI check failed: ${failed.map((f) => f.name).join('; ')}`);
      } catch (err) {
        problems.push(`ui: ${(err as Error).message}`);
      }
    }
    if (!only || only === 'untrusted') {
      log('untrusted: the studio in an untrusted workspace (Playwright)');
      try {
        const untrusted = await timed(timings, 'untrusted phase', () =>
          runUntrusted(browser, fixture),
        );
        ui = [...ui, ...untrusted];
        const failed = untrusted.filter((r) => !r.ok);
        if (failed.length)
          problems.push(
            `untrusted-workspace check failed: ${failed.map((f) => f.name).join('; ')}`,
          );
      } catch (err) {
        problems.push(`untrusted: ${(err as Error).message}`);
      }
    }
    if (!only || only === 'packaged') {
      log(
        'packaged: the .vsix installed in code-server sets up its trainer and trains (Playwright)',
      );
      try {
        const packaged = await timed(timings, 'packaged phase', () =>
          runPackaged(browser, fixture),
        );
        ui = [...ui, ...packaged];
        const failed = packaged.filter((r) => !r.ok);
        if (failed.length)
          problems.push(`packaged-extension check failed: ${failed.map((f) => f.name).join('; ')}`);
        if (packaged.length === 0) problems.push('the packaged phase ran no checks');
      } catch (err) {
        problems.push(`packaged: ${(err as Error).message}`);
      }
    }
  } finally {
    await browser.close().catch(() => undefined);
    if (process.env.REHEARSAL_EDITOR_KEEP) log(`fixture kept in ${fixture.root}`);
    else await fixture.dispose();
  }

  timings.total = Date.now() - t0;
  await fs.writeFile(path.join(RESULTS, 'timings.json'), JSON.stringify(timings, null, 2) + '\n');
  console.log('');
  if (suite) log(`suite: ${suite.passed} passing, ${suite.failed} failing`);
  if (ui.length)
    log(
      `ui: ${ui.filter((r) => r.ok).length} of ${ui.length} checks passed; screenshots in ${path.relative(REPO, RESULTS)}/`,
    );
  log(
    `timings (s): ${Object.entries(timings)
      .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)}`)
      .join(' · ')}`,
  );
  for (const p of problems) console.error(`✗ ${p}`);
  return problems.length ? 1 : 0;
}

/** Prints the lines appended to a file as they arrive (the suite's log, written by the extension host). */
function followFile(
  file: string,
  onLine: (line: string) => void,
): { flush(): Promise<void>; stop(): Promise<void> } {
  let offset = 0;
  let partial = '';
  const read = async () => {
    const handle = await fs.open(file, 'r').catch(() => undefined);
    if (!handle) return;
    try {
      const { size } = await handle.stat();
      if (size <= offset) return;
      const buffer = Buffer.alloc(size - offset);
      await handle.read(buffer, 0, buffer.length, offset);
      offset = size;
      const lines = (partial + buffer.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      lines.forEach(onLine);
    } finally {
      await handle.close();
    }
  };
  let reading = Promise.resolve();
  const timer = setInterval(() => {
    reading = reading.then(read);
  }, 250);
  return {
    flush: () => (reading = reading.then(read)),
    stop: async () => {
      clearInterval(timer);
      await (reading = reading.then(read));
      if (partial) onLine(partial);
    },
  };
}

function tail(lines: string[], n = 40): string {
  return lines
    .slice(-n)
    .map((l) => `  | ${l}`)
    .join('\n');
}

// Nothing may outlive the stage: a deadline for the whole run, and cleanup on every way out.
const deadline = setTimeout(() => {
  console.error(
    `✗ the editor stage took longer than ${STAGE_TIMEOUT_MS / 1000}s; stopping code-server and Chromium`,
  );
  killAllNow();
  process.exit(1);
}, STAGE_TIMEOUT_MS);
deadline.unref();
process.on('exit', killAllNow);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAllNow();
    process.exit(130);
  });
}

main()
  .then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      console.error(`✗ editor tests: ${(err as Error).message}`);
      process.exitCode = 1;
    },
  )
  .finally(() => clearTimeout(deadline));
