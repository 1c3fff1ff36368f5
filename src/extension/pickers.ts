import * as path from 'node:path';
import * as vscode from 'vscode';
import { runNode, tracesNewestFirst } from '../core/explorer/tree';
import { episodeOutcome, fidelityBadge } from '../core/fidelity/verdicts';
import { fidelityRank } from '../core/explorer/treeFilter';
import type { TraceLibrary } from '../core/trace/index/library';
import type { Services } from './services';

/** Quick pick over every call of every indexed trace, least faithful first. */
export async function pickCall(
  { library }: Services,
  placeHolder = 'Pick a call to compare its rehearsal with the actual response',
): Promise<{ file: string; callId: string } | undefined> {
  const items: (vscode.QuickPickItem & { file: string; callId: string; rank: number })[] = [];
  for (const file of library.files) {
    const index = library.index(file);
    for (const call of index?.calls() ?? []) {
      const badge = fidelityBadge(call);
      items.push({
        label: `${call.tool}`,
        description: `${call.callId} · ${badge.text}`,
        detail: index?.run?.runId ?? file,
        file,
        callId: call.callId,
        rank: fidelityRank(call),
      });
    }
  }
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      'Rehearsal: no calls recorded yet. Run a task, or open a trace.',
    );
    return undefined;
  }
  items.sort((a, b) => a.rank - b.rank);
  return vscode.window.showQuickPick(items, {
    placeHolder,
    matchOnDescription: true,
    matchOnDetail: true,
  });
}

/**
 * The quick-pick items of runs: each says what the Trace Explorer's row says (mode, policy,
 * episodes, success), its date and its folder (issue 27: the pickers showed only ids and paths).
 */
export function runPickItems(
  library: TraceLibrary,
  files: readonly string[],
): (vscode.QuickPickItem & { file: string })[] {
  return files.map((f) => {
    const node = runNode(library, f);
    return {
      label: node.label,
      description: node.description, // ends with the run's date
      detail: vscode.workspace.asRelativePath(path.dirname(f)),
      file: f,
    };
  });
}

/** Quick pick of a trace, newest run first; the only one without asking. */
export async function pickTrace(
  { library }: Services,
  placeHolder = 'Which run?',
  exclude: readonly string[] = [],
): Promise<string | undefined> {
  const files = tracesNewestFirst(library).filter((f) => !exclude.includes(f));
  if (files.length <= 1) return files[0];
  const picked = await vscode.window.showQuickPick(runPickItems(library, files), {
    placeHolder,
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return picked?.file;
}

/** Quick pick of an episode of an indexed trace, newest run first. */
export async function pickEpisode({
  library,
}: Services): Promise<{ file: string; episodeId: string } | undefined> {
  const items: (vscode.QuickPickItem & { file: string; episodeId: string })[] = [];
  for (const file of tracesNewestFirst(library)) {
    const index = library.index(file);
    for (const ep of index?.episodes ?? []) {
      items.push({
        label: `${ep.episodeId} ${ep.taskId}`,
        description: episodeOutcome(ep).description,
        detail: index?.run?.runId,
        file,
        episodeId: ep.episodeId,
      });
    }
  }
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      'Rehearsal: no episodes recorded yet. Run a task, or open a trace.',
    );
    return undefined;
  }
  return vscode.window.showQuickPick(items, {
    placeHolder: 'Which episode?',
    matchOnDescription: true,
    matchOnDetail: true,
  });
}
