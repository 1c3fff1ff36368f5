/**
 * The same extension-host suite under `@vscode/test-electron`, for machines with desktop VS Code:
 *
 *   npx tsc -p . && node scripts/build.mjs && node out/test/editor/runElectron.js
 *
 * It downloads VS Code (VSCODE_VERSION, default 1.100.3, the version code-server 4.100.3 carries)
 * into `.vscode-test/` from update.code.visualstudio.com, or uses the binary at VSCODE_EXECUTABLE.
 * Offline it stops with a message that says so; `node out/test/editor/run.js` (code-server) is the
 * offline, CI runner. On Linux without a display, run it under `xvfb-run -a`.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { downloadAndUnzipVSCode, runTests } from '@vscode/test-electron';
import { createFixture } from './fixture';
import { log } from './log';

const REPO = path.resolve(__dirname, '..', '..', '..');
const VERSION = process.env.VSCODE_VERSION ?? '1.100.3';
const DOWNLOAD_IDLE_TIMEOUT_MS = 15_000;

async function vscodeExecutable(): Promise<string> {
  if (process.env.VSCODE_EXECUTABLE) return process.env.VSCODE_EXECUTABLE;
  try {
    return await downloadAndUnzipVSCode({
      version: VERSION,
      cachePath: path.join(REPO, '.vscode-test'),
      timeout: DOWNLOAD_IDLE_TIMEOUT_MS,
    });
  } catch (err) {
    throw new Error(
      `Could not download VS Code ${VERSION} (${(err as Error).message}). @vscode/test-electron downloads desktop VS Code from update.code.visualstudio.com; ` +
        'on a machine without that access set VSCODE_EXECUTABLE to an installed VS Code binary, or run the offline runner: node out/test/editor/run.js',
    );
  }
}

async function main(): Promise<number> {
  const executable = await vscodeExecutable();
  const results = path.join(REPO, 'test-results', 'editor');
  await fs.mkdir(results, { recursive: true });
  const fixture = await createFixture();
  try {
    log(`running the suite in ${executable}`);
    const env: Record<string, string> = {
      REHEARSAL_EDITOR_RESULTS: path.join(results, 'electron-suite-results.json'),
    };
    if (process.env.REHEARSAL_EDITOR_GREP)
      env.REHEARSAL_EDITOR_GREP = process.env.REHEARSAL_EDITOR_GREP;
    return await runTests({
      vscodeExecutablePath: executable,
      extensionDevelopmentPath: REPO,
      extensionTestsPath: path.join(REPO, 'out', 'test', 'editor', 'suite', 'index.js'),
      extensionTestsEnv: env,
      launchArgs: [
        fixture.suiteWorkspace,
        '--user-data-dir',
        path.join(fixture.root, 'electron-user-data'),
        '--disable-extensions',
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
        '--disable-gpu',
      ],
    });
  } finally {
    await fixture.dispose();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(`✗ editor tests (desktop VS Code): ${(err as Error).message}`);
    process.exitCode = 1;
  },
);
