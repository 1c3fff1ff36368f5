import * as path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from '../../core/base/errors';
import { fidelityBadge } from '../../core/trace/tree';
import { callTreeNode, tracesNewestFirst } from '../../core/trace/tree';
import type { Services } from '../services';
import { registerCommand } from '../registerCommand';
import { showFidelityReport } from '../reportDocument';
import type { CallTarget } from '../commands';
import { VIEWS } from '../commands';

/** The Trace Explorer, call diffs and reports: browse recorded runs and compare rehearsed with actual. */
export function registerTraceFeatures(context: vscode.ExtensionContext, services: Services): void {
  const { library, watcher, callDiffs, explorer } = services;
  const view = vscode.window.createTreeView(VIEWS.traceExplorer, { treeDataProvider: explorer, showCollapseAll: true });
  const updateMessage = () => {
    view.message = library.files.length ? undefined : 'No runs yet. Traces appear here from .rehearsal/runs/*/trace.jsonl, or use Open Trace.';
  };
  updateMessage();

  context.subscriptions.push(
    view,
    library.onDidChange(updateMessage),

    registerCommand('rehearsal.refreshTraces', () => watcher.rescan()),

    registerCommand('rehearsal.openTrace', async (file) => {
      const target = file ?? (await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Rehearsal traces': ['jsonl'] }, openLabel: 'Open Trace' }))?.[0]?.fsPath;
      if (!target) return;
      await watcher.open(target);
      const failure = library.failure(target);
      if (failure) void vscode.window.showErrorMessage(`Rehearsal: cannot open ${path.basename(target)}: ${failure}`);
    }),

    registerCommand('rehearsal.showCallDiff', async (target) => {
      const chosen = target ? toCallTarget(target) : await pickCall(services);
      if (!chosen) return;
      try {
        await callDiffs.show(chosen.file, chosen.callId);
        const node = callTreeNode(library, chosen.file, chosen.callId);
        if (node && view.visible) await view.reveal(node, { select: true, focus: false });
      } catch (err) {
        void vscode.window.showErrorMessage(`Rehearsal: cannot show call ${chosen.callId}: ${errorMessage(err)}`);
      }
    }),

    registerCommand('rehearsal.showReport', async (target) => {
      const file = target?.file ?? (await pickTrace(services));
      if (!file) return;
      try {
        await showFidelityReport(file);
      } catch (err) {
        void vscode.window.showErrorMessage(`Rehearsal: cannot build the report: ${errorMessage(err)}`);
      }
    }),
  );
}

function toCallTarget(target: CallTarget): { file: string; callId: string } | undefined {
  if ('callId' in target) return target;
  return target.kind === 'call' ? { file: target.file, callId: target.entityId } : undefined;
}

/** Quick pick over every call of every trace, least faithful first. */
async function pickCall({ library }: Services): Promise<{ file: string; callId: string } | undefined> {
  const items: (vscode.QuickPickItem & { file: string; callId: string; rank: number })[] = [];
  for (const file of library.files) {
    const index = library.index(file);
    for (const call of index?.calls() ?? []) {
      const badge = fidelityBadge(call);
      const rank = badge.status === 'error' ? -1 : call.scores ? call.scores.fieldF1 : 2;
      items.push({ label: `${call.tool}`, description: `${call.callId} · ${badge.text}`, detail: index?.run?.runId ?? file, file, callId: call.callId, rank });
    }
  }
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Rehearsal: no calls recorded yet. Run a task, or open a trace.');
    return undefined;
  }
  items.sort((a, b) => a.rank - b.rank);
  return vscode.window.showQuickPick(items, { placeHolder: 'Pick a call to compare its rehearsal with the actual response', matchOnDescription: true, matchOnDetail: true });
}

async function pickTrace({ library }: Services): Promise<string | undefined> {
  const files = tracesNewestFirst(library);
  if (files.length <= 1) return files[0];
  const picked = await vscode.window.showQuickPick(
    files.map((f) => ({ label: library.index(f)?.run?.runId ?? path.basename(path.dirname(f)), description: f, file: f })),
    { placeHolder: 'Which run?' },
  );
  return picked?.file;
}
