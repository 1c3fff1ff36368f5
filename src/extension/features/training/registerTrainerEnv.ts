import * as path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from '../../../core/base/errors';
import type { PlanOptions } from '../../../core/training/launch/backends';
import { setupTrainerEnv } from '../../../core/training/pythonEnv';
import { registerCommand } from '../../registerCommand';
import type { Services } from '../../services';
import { trainerPython } from '../../settings';
import { ensureTrusted } from '../../trust';

/**
 * The editor's trainer environment: in the extension's global storage, so that it outlives updates
 * of the extension (a changed pin makes it stale, and the next launch says so).
 */
export function trainerEnvDir(context: vscode.ExtensionContext): string {
  return path.join(context.globalStorageUri.fsPath, 'trainer-env');
}

/** What every launch from the editor passes to the core's launcher: the setting, else the editor's environment. */
export function trainerPythonOptions(
  context: vscode.ExtensionContext,
): () => Pick<PlanOptions, 'python' | 'envDir'> {
  return () => ({ python: trainerPython(), envDir: trainerEnvDir(context) });
}

/**
 * "Set Up Trainer": makes the environment training runs use (a venv with the extension's pinned
 * trainer/requirements.txt), with progress in a cancellable notification and pip's lines in the
 * "Rehearsal Training" output channel.
 */
export function registerTrainerEnvFeatures(
  context: vscode.ExtensionContext,
  { training }: Services,
): void {
  context.subscriptions.push(
    registerCommand('rehearsal.setUpTrainer', async () => {
      if (!ensureTrusted('set up the trainer')) return undefined;
      const envDir = trainerEnvDir(context);
      training.log.appendLine(`Setting up the trainer's environment in ${envDir}`);
      try {
        const result = await vscode.window.withProgress(
          {
            location: vscode.ProgressLocation.Notification,
            title: 'Rehearsal: setting up the trainer',
            cancellable: true,
          },
          async (progress, token) => {
            const abort = new AbortController();
            token.onCancellationRequested(() => abort.abort());
            let done = 0;
            return setupTrainerEnv({
              envDir,
              signal: abort.signal,
              onLog: (line) => training.log.appendLine(line),
              onProgress: (p) => {
                const percent = Math.round(p.fraction * 100);
                progress.report({ message: p.message, increment: Math.max(0, percent - done) });
                done = Math.max(done, percent);
              },
            });
          },
        );
        const configured = trainerPython();
        void vscode.window.showInformationMessage(
          `Rehearsal: the trainer's environment is ${result.upToDate ? 'up to date' : 'ready'} (torch ${result.torch}).` +
            (configured
              ? ` Training runs use rehearsal.trainer.python (${configured}) while it is set.`
              : ' Training runs use it.'),
        );
        return result;
      } catch (err) {
        training.log.appendLine(errorMessage(err));
        void vscode.window
          .showErrorMessage(`Rehearsal: ${errorMessage(err)}`, 'Show Log')
          .then((a) => {
            if (a) training.log.show(true);
          });
        return undefined;
      }
    }),
  );
}
