import * as path from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../../../core/base/disposable';
import { errorMessage } from '../../../core/base/errors';
import { isValidId } from '../../../core/trace/format/ids';
import type { TraceLibrary } from '../../../core/trace/index/library';
import type { TurnEvent } from '../../../core/trace/format/schema';
import type { TurnDocument } from '../../../core/explorer/turnDocument';
import { turnDocument } from '../../../core/explorer/turnDocument';
import { parseErrorDiagnostic } from './parseErrorDiagnostic';

/** The URI scheme of a turn's raw text. */
export const TURN_SCHEME = 'rehearsal-turn';

/** `rehearsal-turn:/<turnId>.txt?<trace file>`. */
export function turnTextUri(file: string, turnId: string): vscode.Uri {
  return vscode.Uri.from({ scheme: TURN_SCHEME, path: `/${turnId}.txt`, query: file });
}

function parseTurnUri(uri: vscode.Uri): { file: string; turnId: string } | undefined {
  if (uri.scheme !== TURN_SCHEME) return undefined;
  const turnId = uri.path.replace(/^\//, '').replace(/\.txt$/, '');
  return isValidId(turnId) && path.isAbsolute(uri.query) ? { file: uri.query, turnId } : undefined;
}

/**
 * What the policy wrote in a turn, as a read-only document: opened from a turn whose tool calls did
 * not parse, with the cursor and an error diagnostic at the position the parse error names.
 */
export class TurnTextDocuments extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly diagnostics = this._register(
    vscode.languages.createDiagnosticCollection('rehearsal-turns'),
  );

  constructor(private readonly library: TraceLibrary) {
    super();
    this._register(vscode.workspace.registerTextDocumentContentProvider(TURN_SCHEME, this));
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const target = parseTurnUri(uri);
    if (!target) return 'Not a Rehearsal Studio turn document.\n';
    try {
      return (await this.load(target.file, target.turnId)).text;
    } catch (err) {
      return `Cannot show this turn: ${errorMessage(err)}\n`;
    }
  }

  /** Opens a turn's text, the cursor at its parse error. */
  async show(file: string, turnId: string): Promise<vscode.TextEditor> {
    const doc = await this.load(file, turnId);
    const uri = turnTextUri(file, turnId);
    const editor = await vscode.window.showTextDocument(
      await vscode.workspace.openTextDocument(uri),
      { preview: true },
    );
    if (doc.errorOffset !== undefined && doc.error) {
      const at = editor.document.positionAt(doc.errorOffset);
      editor.selection = new vscode.Selection(at, at);
      editor.revealRange(
        editor.document.lineAt(at.line).range,
        vscode.TextEditorRevealType.InCenterIfOutsideViewport,
      );
      this.diagnostics.set(uri, [
        parseErrorDiagnostic(editor.document, doc.errorOffset, `act parse error ${doc.error}`),
      ]);
      vscode.window.setStatusBarMessage(`Rehearsal: ${turnId}: ${doc.error}`, 8000);
    }
    return editor;
  }

  private async load(file: string, turnId: string): Promise<TurnDocument> {
    const index = await this.library.requireIndex(file);
    const turn = index.turn(turnId);
    if (!turn) throw new Error(`no turn ${turnId} in ${file}`);
    return turnDocument((await index.readEvent(turn.location)) as TurnEvent);
  }
}
