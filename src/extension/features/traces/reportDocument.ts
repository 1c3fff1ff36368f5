import * as path from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../../../core/base/disposable';
import { errorMessage } from '../../../core/base/errors';
import { buildFidelityReport } from '../../../core/report/fidelityReport';
import { renderReport } from '../../../core/report/reportText';
import { palette } from '../../../core/report/textFormat';
import type { TraceLibrary } from '../../../core/trace/index/library';

/** The URI scheme of fidelity reports. */
export const REPORT_SCHEME = 'rehearsal-report';

/**
 * A trace's fidelity report (the same text as `rehearse report`) as a read-only document,
 * `rehearsal-report:/<run folder>.report.txt?<trace file>`, updated when the trace grows. Being
 * read-only, closing it never asks to save.
 */
export class ReportDocuments extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;

  constructor(library: TraceLibrary) {
    super();
    this._register(vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, this));
    this._register(
      library.onDidChange((file) => {
        for (const doc of vscode.workspace.textDocuments)
          if (doc.uri.scheme === REPORT_SCHEME && (file === undefined || doc.uri.query === file))
            this.changed.fire(doc.uri);
      }),
    );
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    if (!path.isAbsolute(uri.query)) return 'Not a Rehearsal Studio report.\n';
    try {
      return renderReport(await buildFidelityReport([uri.query]), palette(false)) + '\n';
    } catch (err) {
      return `Cannot build the report: ${errorMessage(err)}\n`;
    }
  }

  /** Opens the report of a trace. */
  async show(file: string): Promise<void> {
    const uri = vscode.Uri.from({
      scheme: REPORT_SCHEME,
      path: `/${path.basename(path.dirname(file))}.report.txt`,
      query: file,
    });
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }
}
