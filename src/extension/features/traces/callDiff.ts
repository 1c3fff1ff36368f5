import * as path from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../../../core/base/disposable';
import { errorMessage } from '../../../core/base/errors';
import { callSideDocument } from '../../../core/explorer/callDocument';
import type { CallView } from '../../../core/trace/index/callView';
import { loadCallView } from '../../../core/trace/index/callView';
import type { CallSide } from '../../../core/explorer/diffMarks';
import { isValidId } from '../../../core/trace/format/ids';
import type { TraceLibrary } from '../../../core/trace/index/library';
import { parseErrorDiagnostic } from './parseErrorDiagnostic';

/** The URI scheme of the two sides of a call's diff. */
export const CALL_SCHEME = 'rehearsal-call';

/**
 * Builds the URI of one side: `rehearsal-call:/<callId>/<side>.call.json?<trace file>`
 * (`.call.txt` for text). The `.call.json` ending gives JSON sides the `rehearsal-json` language
 * (JSON highlighting, CodeLenses shown in the diff editor), and `.call.txt` text sides the
 * `rehearsal-text` language (wrapped: a rehearsal that did not parse is often one long line),
 * without changing how other files look.
 */
export function callSideUri(
  file: string,
  callId: string,
  side: CallSide,
  language: 'json' | 'plaintext',
): vscode.Uri {
  return vscode.Uri.from({
    scheme: CALL_SCHEME,
    path: `/${callId}/${side}.${language === 'json' ? 'call.json' : 'call.txt'}`,
    query: file,
  });
}

/** The trace file, call and side a call document shows, if `uri` is one. */
export function parseCallUri(
  uri: vscode.Uri,
): { file: string; callId: string; side: CallSide } | undefined {
  if (uri.scheme !== CALL_SCHEME) return undefined;
  const [, callId, name] = uri.path.split('/');
  const side = name?.split('.')[0];
  if (
    !isValidId(callId) ||
    (side !== 'rehearsal' && side !== 'actual') ||
    !path.isAbsolute(uri.query)
  )
    return undefined;
  return { file: uri.query, callId, side };
}

/**
 * Serves the rehearsed and the actual response of a call as read-only documents, read lazily
 * through the trace index, and opens them in the native diff editor.
 */
export class CallDiffDocuments extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;
  private readonly parseErrors = this._register(
    vscode.languages.createDiagnosticCollection('rehearsal-rehearsals'),
  );

  constructor(private readonly library: TraceLibrary) {
    super();
    this._register(vscode.workspace.registerTextDocumentContentProvider(CALL_SCHEME, this));
    // A call still being written (waiting for its tool) updates when its trace grows.
    this._register(
      library.onDidChange((file) => {
        for (const doc of vscode.workspace.textDocuments) {
          if (doc.uri.scheme === CALL_SCHEME && (file === undefined || doc.uri.query === file))
            this.changed.fire(doc.uri);
        }
      }),
    );
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const target = parseCallUri(uri);
    if (!target) return 'Not a Rehearsal Studio call document.\n';
    try {
      return callSideDocument(await this.load(target.file, target.callId), target.side).text;
    } catch (err) {
      return `Cannot show this call: ${errorMessage(err)}\n`;
    }
  }

  /** The URIs of both sides of a call's diff. */
  async uris(
    file: string,
    callId: string,
  ): Promise<{ view: CallView; rehearsal: vscode.Uri; actual: vscode.Uri }> {
    const view = await this.load(file, callId);
    return {
      view,
      rehearsal: callSideUri(
        file,
        callId,
        'rehearsal',
        callSideDocument(view, 'rehearsal').language,
      ),
      actual: callSideUri(file, callId, 'actual', callSideDocument(view, 'actual').language),
    };
  }

  /** Opens the diff editor: rehearsed (left) vs actual (right). */
  async show(
    file: string,
    callId: string,
    options: vscode.TextDocumentShowOptions = {},
  ): Promise<{ rehearsal: vscode.Uri; actual: vscode.Uri }> {
    const { view, rehearsal, actual } = await this.uris(file, callId);
    const title = `${view.entry.tool} ${callId}: rehearsed ↔ actual`;
    await vscode.commands.executeCommand('vscode.diff', rehearsal, actual, title, {
      preview: true,
      ...options,
    });
    // A rehearsal that did not parse: an error where it failed, on the rehearsed side.
    const failed = callSideDocument(view, 'rehearsal').parseError;
    if (failed) {
      const doc = await vscode.workspace.openTextDocument(rehearsal);
      this.parseErrors.set(rehearsal, [
        parseErrorDiagnostic(doc, failed.offset, `rehearsal parse error ${failed.message}`),
      ]);
    }
    return { rehearsal, actual };
  }

  /** One call's view, indexing its trace first if needed. */
  async load(file: string, callId: string): Promise<CallView> {
    let index = this.library.index(file);
    if (!index && !this.library.isLazy(file)) {
      await this.library.add(file);
      index = this.library.index(file);
    }
    index ??= await this.library.ensureIndex(file);
    if (!index) throw new Error(this.library.failure(file) ?? `cannot read ${file}`);
    return loadCallView(index, callId);
  }
}
