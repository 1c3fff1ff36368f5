import * as vscode from 'vscode';
import { errorMessage } from '../../../core/base/errors';
import type { GpuSupportReport } from '../../../core/policy/gpuSupport';
import { checkGpuSupport, installGpuSupport } from '../../../core/policy/gpuSupport';
import { registerCommand, showError, showLog } from '../../registerCommand';
import type { Services } from '../../services';

function describe(report: GpuSupportReport): string {
  const missing = report.requirements.filter((r) => !r.found).map((r) => r.name);
  return report.ready
    ? 'The cuda device is ready.'
    : `Still missing for cuda: ${missing.join(', ')}. The policy runs on webgpu or cpu meanwhile.`;
}

/** "Install GPU Support": onnxruntime-node's CUDA 12 installer, with progress, then what was found. */
export function registerGpuFeatures(context: vscode.ExtensionContext, { output }: Services): void {
  context.subscriptions.push(
    registerCommand('rehearsal.installGpuSupport', async () => {
      if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage(
          'Rehearsal: installing GPU support runs a download; trust this workspace first.',
        );
        return;
      }
      const before = await checkGpuSupport();
      for (const r of before.requirements)
        output.info(`${r.found ? 'found' : 'missing'}: ${r.name}: ${r.detail}`);
      try {
        const report = await vscode.window.withProgress(
          {
            location: vscode.ProgressLocation.Notification,
            title: 'Rehearsal: installing GPU support (CUDA 12 provider)',
            cancellable: true,
          },
          async (progress, token) => {
            const abort = new AbortController();
            token.onCancellationRequested(() => abort.abort());
            return installGpuSupport((line) => {
              output.info(line);
              progress.report({ message: line.slice(0, 80) });
            }, abort.signal);
          },
        );
        for (const r of report.requirements)
          output.info(`${r.found ? 'found' : 'missing'}: ${r.name}: ${r.detail}`);
        void vscode.window.showInformationMessage(`Rehearsal: ${describe(report)}`);
      } catch (err) {
        output.error(errorMessage(err));
        showError(err, { actions: [showLog(output)] });
      }
    }),
  );
}
