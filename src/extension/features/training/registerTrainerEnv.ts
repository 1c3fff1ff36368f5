import * as vscode from 'vscode';
import { errorMessage } from '../../../core/base/errors';
import { setupTrainerEnv } from '../../../core/training/pythonEnv';
import { registerCommand, showError, showLog } from '../../registerCommand';
import type { Services } from '../../services';
import { ensureTrusted } from '../../trust';
import { trainerPython } from '../../settings';
import { trainerEnvDir } from './trainerPython';

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
        showError(err, { actions: [showLog(training.log)] });
        return undefined;
      }
    }),
  );
}
