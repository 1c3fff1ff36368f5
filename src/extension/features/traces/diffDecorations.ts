import * as vscode from 'vscode';
import type { AnnotationLibrary } from '../../../core/annotations/library';
import type { Annotation } from '../../../core/annotations/schema';
import { ANNOTATION_KIND_LABELS, describeAnnotation } from '../../../core/annotations/schema';
import { suggestedKind } from '../../../core/annotations/suggest';
import { Disposable } from '../../../core/base/disposable';
import type { PathRange } from '../../../core/fidelity/pathRanges';
import type { DiffKind } from '../../../core/fidelity/structuralDiff';
import type { AnnotationMark, CallDiffMarks, CallSide } from '../../../core/explorer/diffMarks';
import { annotationMarks, callDiffMarks } from '../../../core/explorer/diffMarks';
import type { TraceLibrary } from '../../../core/trace/index/library';
import type { CallDiffDocuments } from './callDiff';
import { CALL_SCHEME, parseCallUri } from './callDiff';
import type { MarkTarget } from '../../commands';
import { safeTimeout } from '../../../core/base/timers';

const KIND_WORDS: Record<DiffKind, string> = {
  changed: 'value differs',
  typeChanged: 'type differs',
  added: 'missing from the rehearsal',
  removed: 'invented by the rehearsal',
};

const KIND_COLORS: Record<DiffKind, string> = {
  changed: 'editorWarning.foreground',
  typeChanged: 'editorError.foreground',
  added: 'editorInfo.foreground',
  removed: 'editorError.foreground',
};

function pathDecoration(kind: DiffKind): vscode.TextEditorDecorationType {
  const color = new vscode.ThemeColor(KIND_COLORS[kind]);
  return vscode.window.createTextEditorDecorationType({
    isWholeLine: false,
    borderWidth: '0 0 0 3px',
    borderStyle: 'solid',
    borderColor: color,
    overviewRulerColor: color,
    overviewRulerLane: vscode.OverviewRulerLane.Right,
  });
}

/** Maps a path range to an editor range (its first line, where the key is, to its end). */
function toRange(document: vscode.TextDocument, r: PathRange): vscode.Range {
  return new vscode.Range(document.positionAt(r.start), document.positionAt(r.end));
}

function diagnosticSeverity(a: Annotation): vscode.DiagnosticSeverity {
  if (a.verdict === 'acceptable') return vscode.DiagnosticSeverity.Hint;
  return a.severity === 'critical'
    ? vscode.DiagnosticSeverity.Error
    : a.severity === 'major'
      ? vscode.DiagnosticSeverity.Warning
      : vscode.DiagnosticSeverity.Information;
}

/**
 * What the native diff of a call shows beyond the text: each differing JSON path highlighted on the
 * side(s) where it is (a coloured edge, the overview ruler, the kind of difference at the end of the
 * line), a CodeLens per differing path to mark it, and the call's annotations as decorations and
 * diagnostics (so they are in the Problems panel too).
 */
export class CallDiffDecorations extends Disposable implements vscode.CodeLensProvider {
  private readonly pathTypes = new Map<DiffKind, vscode.TextEditorDecorationType>();
  private readonly annotationType: vscode.TextEditorDecorationType;
  /** The kind of difference, in words, at the end of a path's first line. */
  private readonly labelType: vscode.TextEditorDecorationType;
  private readonly diagnostics: vscode.DiagnosticCollection;
  private readonly lensesChanged = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private pending: NodeJS.Timeout | undefined;

  constructor(
    library: TraceLibrary,
    private readonly annotations: AnnotationLibrary,
    private readonly documents: CallDiffDocuments,
  ) {
    super();
    for (const kind of ['changed', 'typeChanged', 'added', 'removed'] as DiffKind[])
      this.pathTypes.set(kind, this._register(pathDecoration(kind)));
    this.annotationType = this._register(
      vscode.window.createTextEditorDecorationType({
        isWholeLine: true,
        backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
        gutterIconSize: 'contain',
        after: { color: new vscode.ThemeColor('editorWarning.foreground'), margin: '0 0 0 2em' },
      }),
    );
    this.labelType = this._register(
      vscode.window.createTextEditorDecorationType({
        after: {
          color: new vscode.ThemeColor('editorCodeLens.foreground'),
          margin: '0 0 0 2em',
          fontStyle: 'italic',
        },
      }),
    );
    this.diagnostics = this._register(
      vscode.languages.createDiagnosticCollection('rehearsal-annotations'),
    );
    this._register(vscode.languages.registerCodeLensProvider({ scheme: CALL_SCHEME }, this));
    this._register(vscode.window.onDidChangeVisibleTextEditors(() => this.schedule()));
    this._register(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme === CALL_SCHEME) this.schedule();
      }),
    );
    this._register(library.onDidChange(() => this.schedule()));
    this._register(
      annotations.onDidChange(() => {
        this.schedule();
        this.lensesChanged.fire();
      }),
    );
    this._register({ dispose: () => clearTimeout(this.pending) });
    this.schedule();
  }

  /** The marks of a call's diff, with its annotations placed (used by lenses, decorations and tests). */
  async marksOf(
    file: string,
    callId: string,
  ): Promise<{ episodeId: string; diff: CallDiffMarks; annotations: AnnotationMark[] }> {
    const view = await this.documents.load(file, callId);
    const diff = callDiffMarks(view);
    const set = await this.annotations.ensure(file);
    return {
      episodeId: view.entry.episodeId,
      diff,
      annotations: annotationMarks(diff.documents, set.forCall(callId)),
    };
  }

  async provideCodeLenses(document: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const target = parseCallUri(document.uri);
    if (!target) return [];
    let marks;
    try {
      marks = await this.marksOf(target.file, target.callId);
    } catch {
      return [];
    }
    const lenses: vscode.CodeLens[] = [];
    const top = new vscode.Range(0, 0, 0, 0);
    const trajectory = new vscode.CodeLens(top, {
      title: '$(list-flat) Trajectory',
      command: 'rehearsal.openTrajectory',
      arguments: [{ file: target.file, episodeId: marks.episodeId, callId: target.callId }],
    });
    // An untrusted workspace only views: no lens offers a mark that would be refused.
    if (!vscode.workspace.isTrusted) return target.side === 'rehearsal' ? [trajectory] : [];
    if (target.side === 'rehearsal') {
      const call: MarkTarget = { file: target.file, callId: target.callId };
      lenses.push(
        new vscode.CodeLens(top, {
          title: '$(report) Mark call as fidelity error',
          command: 'rehearsal.markFidelityError',
          arguments: [call],
        }),
        new vscode.CodeLens(top, {
          title: '$(check) Rehearsal acceptable',
          command: 'rehearsal.acceptRehearsal',
          arguments: [call],
        }),
        trajectory,
      );
    }
    for (const lens of marks.diff.lenses.filter((l) => l.side === target.side)) {
      const args: MarkTarget = {
        file: target.file,
        callId: target.callId,
        path: lens.path,
        kind: suggestedKind(lens.kind),
      };
      const at = document.lineAt(Math.min(lens.range.startLine, document.lineCount - 1)).range;
      lenses.push(
        new vscode.CodeLens(at, {
          title: `$(report) Mark ${lens.path} (${KIND_WORDS[lens.kind]})`,
          tooltip: `Mark ${lens.path} as a fidelity error: suggested kind ${ANNOTATION_KIND_LABELS[suggestedKind(lens.kind)]}`,
          command: 'rehearsal.markFidelityError',
          arguments: [args],
        }),
      );
    }
    return lenses;
  }

  private schedule(): void {
    clearTimeout(this.pending);
    this.pending = safeTimeout(() => void this.update(), 50);
  }

  /** Decorates every visible call document, and sets the diagnostics of every open one. */
  private async update(): Promise<void> {
    const editors = vscode.window.visibleTextEditors.filter(
      (e) => e.document.uri.scheme === CALL_SCHEME,
    );
    const seen = new Set<string>();
    for (const editor of editors) {
      const target = parseCallUri(editor.document.uri);
      if (!target) continue;
      let marks;
      try {
        marks = await this.marksOf(target.file, target.callId);
      } catch {
        continue;
      }
      if (editor.document.getText() !== marks.diff.documents[target.side].text) continue; // not refreshed yet
      const onThisSide = marks.diff.marks.filter((m) => m.side === target.side);
      for (const [kind, type] of this.pathTypes) {
        editor.setDecorations(
          type,
          onThisSide
            .filter((m) => m.kind === kind)
            .map((m) => ({
              range: toRange(editor.document, m.range),
              hoverMessage: `${m.path}: ${KIND_WORDS[m.kind]}`,
            })),
        );
      }
      editor.setDecorations(
        this.labelType,
        onThisSide.map((m) => ({
          range: editor.document.lineAt(Math.min(m.range.startLine, editor.document.lineCount - 1))
            .range,
          renderOptions: { after: { contentText: `◂ ${m.path}: ${KIND_WORDS[m.kind]}` } },
        })),
      );
      const here = marks.annotations.filter((a) => a.side === target.side);
      editor.setDecorations(
        this.annotationType,
        here.map((a) => ({
          range: editor.document.lineAt(Math.min(a.range.startLine, editor.document.lineCount - 1))
            .range,
          hoverMessage: new vscode.MarkdownString(
            `**${describeAnnotation(a.annotation)}**${a.annotation.note ? `\n\n${a.annotation.note}` : ''}\n\n_${a.annotation.author}, ${a.annotation.updatedAt}_`,
          ),
          renderOptions: {
            after: {
              contentText: `  ⚑ ${describeAnnotation(a.annotation)}${a.annotation.note ? `: ${a.annotation.note}` : ''}`,
            },
          },
        })),
      );
      this.diagnostics.set(
        editor.document.uri,
        here.map((a) => this.diagnostic(editor.document, a)),
      );
      seen.add(editor.document.uri.toString());
    }
    // Documents no longer shown keep no stale problems.
    this.diagnostics.forEach((uri) => {
      if (!seen.has(uri.toString())) this.diagnostics.delete(uri);
    });
  }

  private diagnostic(document: vscode.TextDocument, mark: AnnotationMark): vscode.Diagnostic {
    const a = mark.annotation;
    const d = new vscode.Diagnostic(
      toRange(document, mark.range),
      `${describeAnnotation(a)}${a.note && a.verdict === 'error' ? `: ${a.note}` : ''}`,
      diagnosticSeverity(a),
    );
    d.source = 'Rehearsal';
    d.code = a.kind ?? 'acceptable';
    return d;
  }
}

/** The side of a call document, for commands run from an editor. */
export function activeCallTarget(): { file: string; callId: string; side: CallSide } | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  return uri ? parseCallUri(uri) : undefined;
}
