import * as vscode from 'vscode';
import { buildFidelityReport } from '../core/report/fidelityReport';
import { renderReport } from '../core/report/reportText';
import { palette } from '../core/report/textFormat';

/** Opens a trace's fidelity report (the same text as `rehearse report`) in an untitled document. */
export async function showFidelityReport(file: string): Promise<void> {
  const report = await buildFidelityReport([file]);
  const doc = await vscode.workspace.openTextDocument({ content: renderReport(report, palette(false)) + '\n', language: 'plaintext' });
  await vscode.window.showTextDocument(doc, { preview: true });
}
