/**
 * Checks of the packaged extension, installed from the `.vsix` that `npm run package` makes, as a
 * user has it: no repository beside it and no trainer environment yet. Start Training Run says that
 * the environment is missing and offers Set Up Trainer; that makes the environment (the pinned
 * trainer/requirements.txt the .vsix carries) with progress; then a tiny training run starts from
 * the installed extension's own trainer and finishes with an exported model.
 */
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type { UiCheckOptions, UiCheckResult } from './uiChecks';
import { runChecks, writeTinyRunFile } from './uiChecks';
import type { Workbench } from './workbench';

/** Options of {@link runPackagedChecks}. */
export interface PackagedCheckOptions extends UiCheckOptions {
  model: string;
  /** The installed extension's folder (under the session's extensions folder). */
  extensionDir: string;
  /** The folder the extension's Set Up Trainer makes (its global storage's `trainer-env`). */
  envDir: string;
  /** How long Set Up Trainer may take (pip installs torch). */
  setupTimeoutMs: number;
}

export async function runPackagedChecks(
  workbench: Workbench,
  options: PackagedCheckOptions,
): Promise<UiCheckResult[]> {
  const { page } = workbench;
  const shot = (name: string) =>
    page.screenshot({ path: path.join(options.screenshots, `${name}.png`) });
  const startRun = () =>
    workbench.pick('Rehearsal: Start Training Run', {
      loaded: 'vsix-tiny.run.json',
      query: 'vsix-tiny',
      row: 'vsix-tiny.run.json',
    });
  const checks: [string, () => Promise<void>][] = [
    [
      'packaged: without an environment, Start Training Run says to set up the trainer and offers Set Up Trainer',
      async () => {
        await workbench.waitUntilLoaded(options.loadTimeoutMs);
        // The installed extension's views are there once the extension host has read it.
        await workbench.openViewContainer('Rehearsal');
        await workbench.pane('Trace Explorer').waitFor({ timeout: options.loadTimeoutMs });
        await writeTinyRunFile(options.workspace, options.model, 'vsix-tiny');
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
      "packaged: a tiny training run starts from the installed extension's trainer and exports its model",
      async () => {
        await workbench.closeEditors();
        await startRun();
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
        await workbench.activeTab().filter({ hasText: 'Training vsix-tiny' }).waitFor();
        const view = workbench.webview();
        await view
          .locator('vscode-badge.run-status', { hasText: 'done' })
          .waitFor({ timeout: 120_000 });
        assert.match(await view.locator('.progress-text').innerText(), /^step 8 of 8/);
        await view.locator('.after-run', { hasText: 'Exported' }).waitFor({ timeout: 60_000 });
        await shot('packaged-training-done');
      },
    ],
  ];
  return runChecks(checks, options, shot, 'packaged-');
}
