/**
 * Checks of the packaged extension, installed from the `.vsix` that `npm run package` makes, as a
 * user has it: no repository beside it, no trainer environment yet, and a copy of
 * `examples/workspace` open. Start Training Run on the workspace's example run file says that the
 * environment is missing and offers Set Up Trainer; that makes the environment (the pinned
 * trainer/requirements.txt the .vsix carries) with progress. Then the same run file says its rows
 * are not there and offers Export Training Rows; once they are exported it trains from the
 * installed extension's own trainer and default policy, and its model is exported.
 */
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { UiCheckOptions, UiCheckResult } from './uiChecks';
import { runChecks } from './uiChecks';
import type { Workbench } from './workbench';

/** Options of {@link runPackagedChecks}. */
export interface PackagedCheckOptions extends UiCheckOptions {
  /** The installed extension's folder (under the session's extensions folder). */
  extensionDir: string;
  /** The folder the extension's Set Up Trainer makes (its global storage's `trainer-env`). */
  envDir: string;
  /** How long Set Up Trainer may take (pip installs torch). */
  setupTimeoutMs: number;
}

/** The example run file of examples/workspace, as the workspace has it. */
const RUN_FILE = 'retail-grounding.run.json';

export async function runPackagedChecks(
  workbench: Workbench,
  options: PackagedCheckOptions,
): Promise<UiCheckResult[]> {
  const { page } = workbench;
  const shot = (name: string) =>
    page.screenshot({ path: path.join(options.screenshots, `${name}.png`) });
  const startRun = () =>
    workbench.pick('Rehearsal: Start Training Run', {
      loaded: RUN_FILE,
      query: 'retail-grounding',
      row: RUN_FILE,
    });
  const runFile = JSON.parse(await fs.readFile(path.join(options.workspace, RUN_FILE), 'utf8')) as {
    name: string;
    hyperparameters: { train: { steps: number } };
  };
  const runDir = path.join(options.workspace, '.rehearsal', 'training', runFile.name);
  /** Picks the quick pick row that has `text` (typed to filter it first). */
  const choose = async (text: string) => {
    await workbench.quickPickRows().filter({ hasText: text }).first().waitFor({ timeout: 30_000 });
    await workbench.quickInput().fill(text);
    await workbench.quickPickRows().filter({ hasText: text }).first().waitFor();
    await page.keyboard.press('Enter');
  };
  const checks: [string, () => Promise<void>][] = [
    [
      'packaged: without an environment, Start Training Run says to set up the trainer and offers Set Up Trainer',
      async () => {
        await workbench.waitUntilLoaded(options.loadTimeoutMs);
        // The installed extension's views are there once the extension host has read it.
        await workbench.openViewContainer('Rehearsal');
        await workbench.pane('Trace Explorer').waitFor({ timeout: options.loadTimeoutMs });
        await startRun();
        const error = workbench.notification(/trainer's Python environment is not set up/);
        await error.waitFor({ timeout: 30_000 });
        assert.match(await error.innerText(), /Set Up Trainer/);
        assert.equal(await workbench.dialog().count(), 0, 'no launch was offered');
        await shot('packaged-env-missing');
        await error.locator('.monaco-button', { hasText: 'Set Up Trainer' }).click();
      },
    ],
    [
      "packaged: Set Up Trainer makes the environment from the extension's pinned requirements, with progress",
      async () => {
        await workbench
          .notification(/setting up the trainer/)
          .first()
          .waitFor({ timeout: 30_000 });
        await shot('packaged-setup-progress');
        const ready = workbench.notification(/the trainer's environment is ready \(torch 2\.\d+/);
        await ready.waitFor({ timeout: options.setupTimeoutMs });
        assert.ok(
          existsSync(path.join(options.envDir, 'rehearsal-env.json')),
          `the environment's marker is in ${options.envDir}`,
        );
      },
    ],
    [
      'packaged: the example run file names its missing rows and offers Export Training Rows, which writes them from a sample run',
      async () => {
        await workbench.closeEditors();
        await startRun();
        const missing = workbench.notification(
          /names a path that is not there: \$\.data\.train\[0\] "\.rehearsal\/datasets\/rows\.train\.jsonl"/,
        );
        await missing.waitFor({ timeout: 30_000 });
        assert.equal(await workbench.dialog().count(), 0, 'no launch was offered');
        await shot('packaged-rows-missing');
        await missing.locator('.monaco-button', { hasText: 'Export Training Rows' }).click();
        await choose('shadow-sample');
        await choose('Every call');
        const exported = workbench.notification(/wrote rows\.train\.jsonl \(\d+\)/);
        await exported.waitFor({ timeout: 60_000 });
        assert.ok(
          existsSync(path.join(options.workspace, '.rehearsal', 'datasets', 'rows.train.jsonl')),
          'the rows are where the run file reads them',
        );
        await exported.locator('.monaco-button', { hasText: 'Start Training Run' }).click();
      },
    ],
    [
      "packaged: the example run file trains from the installed extension's trainer and default policy, and exports its model",
      async () => {
        await workbench.dialog().waitFor({ timeout: 60_000 });
        const command = await workbench.dialog().innerText();
        assert.ok(
          command.includes(`PYTHONPATH=${options.extensionDir}`),
          `the trainer is the extension's own: ${command}`,
        );
        assert.ok(
          command.includes(`${path.join(options.envDir, 'bin', 'python')} -m trainer sft`),
          `the launch uses the environment Set Up Trainer made: ${command}`,
        );
        await workbench.dialogButton('Start').click();
        await workbench
          .activeTab()
          .filter({ hasText: `Training ${runFile.name}` })
          .waitFor();
        const config = JSON.parse(
          await fs.readFile(path.join(runDir, 'trainer-config.json'), 'utf8'),
        ) as { model: { path: string } };
        assert.equal(
          config.model.path,
          path.join(options.extensionDir, 'models', 'default'),
          '"default" is the installed extension\'s policy',
        );
        const view = workbench.webview();
        await view
          .locator('vscode-badge.run-status', { hasText: 'done' })
          .waitFor({ timeout: 300_000 });
        const steps = runFile.hyperparameters.train.steps;
        assert.match(
          await view.locator('.progress-text').innerText(),
          new RegExp(`^step ${steps} of ${steps}`),
        );
        await view.locator('.after-run', { hasText: 'Exported' }).waitFor({ timeout: 60_000 });
        assert.ok(
          existsSync(path.join(runDir, 'final', 'onnx', 'model.onnx')),
          'the model is exported',
        );
        await shot('packaged-training-done');
      },
    ],
  ];
  return runChecks(checks, options, shot, 'packaged-');
}
