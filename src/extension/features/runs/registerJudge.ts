import * as vscode from 'vscode';
import { registerCommand } from '../../registerCommand';
import { judgeApiKeySecret } from './runController';
import { judgeSettings } from '../../settings';
import { ensureTrusted } from '../../trust';

/** The judge of `judge` items: Set Judge API Key (the endpoint and model are settings). */
export function registerJudgeFeatures(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    registerCommand('rehearsal.setJudgeApiKey', async (key) => {
      if (!ensureTrusted('store a judge key')) return;
      const { endpoint } = judgeSettings();
      if (!endpoint) {
        void vscode.window
          .showInformationMessage(
            "Rehearsal: set rehearsal.judge.endpoint first (the judge's base URL, e.g. http://127.0.0.1:8000/v1).",
            'Open Settings',
          )
          .then((a) => {
            if (a)
              void vscode.commands.executeCommand(
                'workbench.action.openSettings',
                'rehearsal.judge',
              );
          });
        return;
      }
      const value =
        key ??
        (await vscode.window.showInputBox({
          title: `Judge API key for ${endpoint}`,
          prompt: "Kept in the editor's secret storage, never in settings. Empty removes it.",
          password: true,
          ignoreFocusOut: true,
        }));
      if (value === undefined) return;
      if (value) await context.secrets.store(judgeApiKeySecret(endpoint), value);
      else await context.secrets.delete(judgeApiKeySecret(endpoint));
    }),
  );
}
