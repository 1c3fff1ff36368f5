import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { writeCollectedTraces } from '../../../core/otlp/otlpLive';
import { OTLP_HTTP_PORT, OtlpReceiver } from '../../../core/otlp/otlpReceiver';
import { STUDIO_FOLDER } from '../../../core/trace/format/discover';
import { registerCommand } from '../../registerCommand';
import type { Services } from '../../services';
import { ensureTrusted } from '../../trust';

/** Where the editor's receiver listens and the token it takes: what the start command returns. */
export interface OtlpReceiverAddress {
  url: string;
  token: string;
}

/**
 * "Receive OpenTelemetry Traces (OTLP)": `rehearse collect` inside the editor. The receiver listens
 * on 127.0.0.1 (OTLP/HTTP's port 4318, else a free one) with a token for this session, writes each
 * trace as it completes into the first workspace folder's `.rehearsal/runs` (the Trace Explorer
 * shows it) and `.rehearsal/imports/otlp-live`, and logs a line per trace. The two environment
 * variables for an instrumented agent can be copied from the notification. "Stop Receiving"
 * writes what is pending and stops; so does closing the window.
 */
export function registerOtlpReceiverFeatures(
  context: vscode.ExtensionContext,
  { output }: Services,
): void {
  let receiver: OtlpReceiver | undefined;
  let variables = '';
  let listening: OtlpReceiverAddress | undefined;
  const stop = async () => {
    const r = receiver;
    receiver = undefined;
    if (!r) return;
    await r.close();
    output.info('OTLP receiver stopped; every trace received is written.');
  };
  context.subscriptions.push(
    registerCommand('rehearsal.startOtlpReceiver', async () => {
      if (receiver) {
        void showVariables('The OTLP receiver is already running.', variables);
        return listening;
      }
      if (!ensureTrusted('receive OpenTelemetry traces into this workspace')) return;
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (!folder) {
        void vscode.window.showWarningMessage(
          'Rehearsal: open a folder first; received traces are written into its .rehearsal folder.',
        );
        return;
      }
      const root = path.join(folder.uri.fsPath, STUDIO_FOLDER);
      const token = randomBytes(24).toString('base64url');
      const log = { out: (l: string) => output.info(l), err: (l: string) => output.warn(l) };
      const make = () =>
        new OtlpReceiver({
          token,
          onTraces: (data) =>
            writeCollectedTraces(
              data,
              path.join(root, 'imports', 'otlp-live'),
              path.join(root, 'runs'),
              log,
            ),
          onError: (err) => output.error(`writing received traces failed: ${String(err)}`),
        });
      let r = make();
      let url: string;
      try {
        url = await r.listen(OTLP_HTTP_PORT);
      } catch {
        // Another receiver (a collector, `rehearse collect`) has OTLP's port: any free one.
        r = make();
        url = await r.listen(0);
      }
      receiver = r;
      variables = [
        `export OTEL_EXPORTER_OTLP_ENDPOINT=${url}`,
        `export OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20${token}`,
      ].join('\n');
      output.info(`Receiving OTLP/HTTP (protobuf or JSON) at ${url}/v1/traces and /v1/logs.`);
      void showVariables(`Receiving OpenTelemetry traces at ${url}.`, variables);
      listening = { url, token };
      return listening;
    }),
    registerCommand('rehearsal.stopOtlpReceiver', stop),
    { dispose: () => void stop() },
  );
}

async function showVariables(message: string, variables: string): Promise<void> {
  const copy = 'Copy Environment Variables';
  const choice = await vscode.window.showInformationMessage(`Rehearsal: ${message}`, copy);
  if (choice === copy) await vscode.env.clipboard.writeText(variables + '\n');
}
