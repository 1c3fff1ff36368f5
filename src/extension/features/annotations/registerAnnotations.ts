import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Annotation } from '../../../core/annotations/schema';
import { describeAnnotation } from '../../../core/annotations/schema';
import { annotationNode } from '../../../core/annotations/tree';
import { errorMessage } from '../../../core/base/errors';
import { TRACE_FILE } from '../../../core/trace/format/discover';
import type { TraceTreeNode } from '../../../core/explorer/tree';
import { callTreeNode } from '../../../core/explorer/tree';
import { promptEdit, promptMark } from './annotationPrompts';
import type { AnnotationTarget, CallTarget, MarkTarget } from '../../commands';
import { parseCallUri } from '../traces/callDiff';
import { activeCallTarget } from '../traces/diffDecorations';
import { pathAtOffset } from '../../../core/fidelity/pathRanges';
import { suggestedKind } from '../../../core/annotations/suggest';
import { executeCommand, registerCommand, showError } from '../../registerCommand';
import type { Services } from '../../services';
import { ensureTrusted } from '../../trust';
import { pickCall } from '../../pickers';

/** Fidelity annotations: mark, accept, edit, delete, the Annotations view, and keeping them in step with the files. */
export function registerAnnotationFeatures(
  context: vscode.ExtensionContext,
  services: Services,
): void {
  keepAnnotationsLoaded(context, services);
  keepAnnotationsMessage(context, services);
  registerMarkCommands(context, services);
  registerAnnotationCommands(context, services);
}

/** Reads the annotations of every trace the library knows, and again whenever one changes on disk. */
function keepAnnotationsLoaded(context: vscode.ExtensionContext, services: Services): void {
  const { library, annotations } = services;
  const loadAll = async () => {
    await Promise.all(
      library.files
        .filter((f) => !annotations.get(f))
        .map((f) => annotations.load(f).catch((err) => services.output.warn(errorMessage(err)))),
    );
    for (const f of annotations.files) if (!library.files.includes(f)) annotations.forget(f);
  };
  const watchers = (vscode.workspace.workspaceFolders ?? []).map((folder) => {
    const w = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(folder, '.rehearsal/runs/*/annotations.jsonl'),
    );
    const reload = (uri: vscode.Uri) => {
      const trace = path.join(path.dirname(uri.fsPath), TRACE_FILE);
      if (library.files.includes(trace)) void annotations.load(trace);
    };
    w.onDidCreate(reload);
    w.onDidChange(reload);
    w.onDidDelete(reload);
    return w;
  });
  context.subscriptions.push(
    ...watchers,
    library.onDidChange((file) => {
      if (file === undefined) void loadAll();
    }),
  );
  void loadAll();
}

/** The Annotations view's message while it is empty. */
function keepAnnotationsMessage(context: vscode.ExtensionContext, services: Services): void {
  const { annotations, annotationsView, annotationsTree: view } = services;
  const updateMessage = () => {
    view.message = annotationsView.runs().some((r) => r.set.size > 0)
      ? undefined
      : "No annotations yet. Mark a fidelity error from a call's diff (its CodeLens), the Trace Explorer or the Trajectory panel.";
  };
  updateMessage();
  context.subscriptions.push(annotations.onDidChange(updateMessage));
}

/** Mark a fidelity error (of a call, or of the JSON path at the cursor) and accept a rehearsal. */
function registerMarkCommands(context: vscode.ExtensionContext, services: Services): void {
  const { annotations, callDiffs } = services;
  context.subscriptions.push(
    registerCommand('rehearsal.markFidelityError', async (target) => {
      if (!ensureTrusted('mark fidelity errors')) return undefined;
      const call = await resolveMarkTarget(services, target);
      if (!call) return undefined;
      try {
        const callView = await callDiffs.load(call.file, call.callId);
        const input = await promptMark(callView, call);
        if (!input) return undefined;
        const a = await annotations.mark(call.file, { callId: call.callId, ...input });
        await announce(services, call.file, a, 'Marked');
        return a;
      } catch (err) {
        showError(err, { prefix: `cannot mark ${call.callId}: ` });
        return undefined;
      }
    }),

    // Marking must not depend on the diff's layout: in a narrow editor the diff is inline and its
    // lenses are gone, but the cursor still names a JSON path of the side it is in.
    registerCommand('rehearsal.markPathAtCursor', async () => {
      const editor = vscode.window.activeTextEditor;
      const at = editor ? parseCallUri(editor.document.uri) : undefined;
      if (!editor || !at) {
        void vscode.window.showInformationMessage(
          "Rehearsal: put the cursor in a call's rehearsed or actual response (its diff) to mark the JSON path there.",
        );
        return undefined;
      }
      const jsonPath = pathAtOffset(
        editor.document.getText(),
        editor.document.offsetAt(editor.selection.active),
      );
      if (!jsonPath) {
        void vscode.window.showInformationMessage(
          'Rehearsal: this side is not JSON; mark the call as a whole (Mark Fidelity Error).',
        );
        return undefined;
      }
      // The cursor on no field (`{`, `}`) names the whole response: ask where, as a call-level
      // mark does, rather than mark `$` unasked.
      if (jsonPath === '$')
        return executeCommand('rehearsal.markFidelityError', { file: at.file, callId: at.callId });
      const lens = (
        await services.decorations.marksOf(at.file, at.callId).catch(() => undefined)
      )?.diff.lenses.find((l) => l.path === jsonPath);
      return executeCommand('rehearsal.markFidelityError', {
        file: at.file,
        callId: at.callId,
        path: jsonPath,
        ...(lens ? { kind: suggestedKind(lens.kind) } : {}),
      });
    }),

    registerCommand('rehearsal.acceptRehearsal', async (target) => {
      if (!ensureTrusted('annotate calls')) return undefined;
      const call = await resolveMarkTarget(services, target);
      if (!call) return undefined;
      try {
        const callView = await callDiffs.load(call.file, call.callId);
        const note =
          target && 'note' in target && typeof target.note === 'string' ? target.note : '';
        const a = await annotations.accept(call.file, {
          callId: call.callId,
          episodeId: callView.entry.episodeId,
          tool: callView.entry.tool,
          ...(note ? { note } : {}),
        });
        await announce(services, call.file, a, 'Accepted the rehearsal of');
        return a;
      } catch (err) {
        showError(err, { prefix: `cannot annotate ${call.callId}: ` });
        return undefined;
      }
    }),
  );
}

/** Edit, delete and open an annotation. */
function registerAnnotationCommands(context: vscode.ExtensionContext, services: Services): void {
  const { annotations, callDiffs } = services;
  context.subscriptions.push(
    registerCommand('rehearsal.editAnnotation', async (target, changes) => {
      if (!ensureTrusted('edit annotations')) return;
      const found = await resolveAnnotation(services, target);
      if (!found) return;
      const edit = changes ?? (await promptEdit(found.annotation));
      if (!edit || Object.keys(edit).length === 0) return;
      try {
        await annotations.edit(found.file, found.annotation.id, edit);
      } catch (err) {
        showError(err, { prefix: 'cannot edit the annotation: ' });
      }
    }),

    registerCommand('rehearsal.deleteAnnotation', async (target) => {
      if (!ensureTrusted('delete annotations')) return;
      const found = await resolveAnnotation(services, target);
      if (!found) return;
      try {
        await annotations.delete(found.file, found.annotation.id);
        vscode.window.setStatusBarMessage(
          `Rehearsal: deleted ${describeAnnotation(found.annotation)} on ${found.annotation.callId} (kept in the file's history)`,
          5000,
        );
      } catch (err) {
        showError(err, { prefix: 'cannot delete the annotation: ' });
      }
    }),

    registerCommand('rehearsal.openAnnotation', async (target) => {
      const found = await resolveAnnotation(services, target);
      if (!found) return;
      try {
        const uris = await callDiffs.show(found.file, found.annotation.callId, { preview: true });
        const marks = await services.decorations.marksOf(found.file, found.annotation.callId);
        const placed = marks.annotations.find((m) => m.annotation.id === found.annotation.id);
        if (!placed) return;
        const uri = placed.side === 'rehearsal' ? uris.rehearsal : uris.actual;
        const editor = vscode.window.visibleTextEditors.find(
          (e) => e.document.uri.toString() === uri.toString(),
        );
        if (editor) {
          const line = Math.min(placed.range.startLine, editor.document.lineCount - 1);
          editor.revealRange(
            new vscode.Range(line, 0, line, 0),
            vscode.TextEditorRevealType.InCenterIfOutsideViewport,
          );
          editor.selection = new vscode.Selection(line, 0, line, 0);
        }
      } catch (err) {
        showError(err, { prefix: 'cannot open the annotated call: ' });
      }
    }),
  );
}

/** Says what was written, and shows it in the Annotations view. */
async function announce(
  services: Services,
  file: string,
  a: Annotation,
  verb: string,
): Promise<void> {
  vscode.window.setStatusBarMessage(
    `Rehearsal: ${verb} ${a.callId}: ${describeAnnotation(a)}`,
    5000,
  );
  const view = services.annotationsTree;
  if (view.visible)
    await view
      .reveal(annotationNode(file, a), { select: true, focus: false })
      .then(undefined, () => undefined);
}

async function resolveMarkTarget(
  services: Services,
  target: MarkTarget | (CallTarget & { note?: string }) | undefined,
): Promise<Exclude<MarkTarget, TraceTreeNode> | undefined> {
  if (target && 'entityId' in target)
    return target.kind === 'call' ? { file: target.file, callId: target.entityId } : undefined;
  if (target) return target;
  const active = activeCallTarget();
  if (active) return { file: active.file, callId: active.callId };
  return pickCall(services, 'Which call do you want to annotate?');
}

async function resolveAnnotation(
  services: Services,
  target: AnnotationTarget | undefined,
): Promise<{ file: string; annotation: Annotation } | undefined> {
  if (target && 'annotation' in target && target.annotation)
    return { file: target.file, annotation: target.annotation };
  if (target && 'annotationId' in target) {
    const set = await services.annotations.ensure(target.file);
    const a = set.get(target.annotationId);
    if (!a) {
      void vscode.window.showErrorMessage(
        `Rehearsal: no annotation ${target.annotationId} on this run.`,
      );
      return undefined;
    }
    return { file: target.file, annotation: a };
  }
  const items = services.annotationsView.runs().flatMap((r) =>
    r.set.all().map((a) => ({
      label: describeAnnotation(a),
      description: `${a.tool ?? ''} ${a.callId}`,
      detail: `${r.runId}${a.note ? ` · ${a.note}` : ''}`,
      file: r.file,
      annotation: a,
    })),
  );
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Rehearsal: no annotations yet.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, {
    placeHolder: 'Which annotation?',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return picked ? { file: picked.file, annotation: picked.annotation } : undefined;
}

/** Reveals a call in the Trace Explorer. */
export async function revealCall(services: Services, file: string, callId: string): Promise<void> {
  const node = callTreeNode(services.library, file, callId, services.explorer.options());
  if (node && services.explorerTree.visible)
    await services.explorerTree
      .reveal(node, { select: true, focus: false })
      .then(undefined, () => undefined);
}
