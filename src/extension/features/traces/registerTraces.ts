import * as path from 'node:path';
import * as vscode from 'vscode';
import { callTreeNode } from '../../../core/explorer/tree';
import type { TreeFilter, TreeSort } from '../../../core/explorer/treeFilter';
import type { Services } from '../../services';
import { registerCommand, showError } from '../../registerCommand';
import type { CallTarget, EpisodeTarget } from '../../commands';
import { CONTEXT_KEYS } from '../../commands';
import { activeCallTarget } from './diffDecorations';
import { pickCall, pickEpisode, pickTrace } from '../../pickers';
import { CompareRunsPanel } from './compareRunsPanel';
import type { TraceTreeNode } from '../../../core/explorer/tree';

/** The Trace Explorer, call diffs, reports and the Trajectory panel: browse recorded runs and compare rehearsed with actual. */
export function registerTraceFeatures(context: vscode.ExtensionContext, services: Services): void {
  keepExplorerMessage(context, services);
  registerExplorerCommands(context, services);
  registerCallCommands(context, services);
  registerRunViewCommands(context, services);
}

/** The Trace Explorer's description, its filtered context key and its empty-state message, kept in step. */
function keepExplorerMessage(context: vscode.ExtensionContext, services: Services): void {
  const { library, explorer, explorerTree: view } = services;
  const updateMessage = () => {
    view.description = explorer.stateDescription || undefined;
    void vscode.commands.executeCommand(
      'setContext',
      CONTEXT_KEYS.explorerFiltered,
      explorer.filtered || explorer.sort !== 'trace',
    );
    if (!library.files.length)
      view.message =
        'No runs yet. Traces appear here from .rehearsal/runs/*/trace.jsonl, or use Open Trace.';
    else if (explorer.filtered && explorer.getChildren().length === 0)
      view.message = `No calls match the filter (${explorer.stateDescription}). Clear it with the Clear Filter button.`;
    else view.message = undefined;
  };
  updateMessage();
  context.subscriptions.push(
    library.onDidChange(updateMessage),
    explorer.onDidChangeState(updateMessage),
  );
}

/** Refresh, Open Trace, and the explorer's filter, search, sort and Show More. */
function registerExplorerCommands(context: vscode.ExtensionContext, services: Services): void {
  const { library, watcher, explorer } = services;
  context.subscriptions.push(
    registerCommand('rehearsal.refreshTraces', () => watcher.rescan()),

    registerCommand('rehearsal.openTrace', async (file) => {
      const target =
        file ??
        (
          await vscode.window.showOpenDialog({
            canSelectMany: false,
            filters: { 'Rehearsal traces': ['jsonl'] },
            openLabel: 'Open Trace',
          })
        )?.[0]?.fsPath;
      if (!target) return;
      await watcher.open(target);
      const failure = library.failure(target);
      if (failure)
        void vscode.window.showErrorMessage(
          `Rehearsal: cannot open ${path.basename(target)}: ${failure}`,
        );
    }),

    registerCommand('rehearsal.filterExplorer', async (filter) => {
      const next = filter ?? (await pickFilter(services));
      if (next) explorer.setFilter({ ...next, text: filter ? next.text : explorer.filter.text });
    }),

    registerCommand('rehearsal.searchExplorer', async (text) => {
      const query =
        text ??
        (await vscode.window.showInputBox({
          title: 'Search the Trace Explorer',
          prompt:
            'Tool names, call or episode ids, task ids, error codes, final answers, annotation notes',
          value: explorer.filter.text ?? '',
        }));
      if (query === undefined) return;
      explorer.setFilter({ ...explorer.filter, text: query.trim() || undefined });
    }),

    registerCommand('rehearsal.sortExplorer', async (sort) => {
      const next = sort ?? (await pickSort(explorer.sort));
      if (next) explorer.setSort(next);
    }),

    registerCommand('rehearsal.clearExplorerFilter', () => {
      explorer.setFilter({});
      explorer.setSort('trace');
    }),

    registerCommand('rehearsal.showMore', (file) => {
      if (file) explorer.showMore(file);
    }),
  );
}

/** One call or turn: its diff, its raw text, its episode's Trajectory panel. */
function registerCallCommands(context: vscode.ExtensionContext, services: Services): void {
  const { library, callDiffs, explorer, explorerTree: view, trajectories } = services;
  context.subscriptions.push(
    registerCommand('rehearsal.showTurnText', async (target) => {
      const turn =
        target && 'entityId' in target
          ? target.kind === 'turn'
            ? { file: target.file, turnId: target.entityId }
            : undefined
          : target;
      if (!turn) return;
      try {
        await services.turnTexts.show(turn.file, turn.turnId);
      } catch (err) {
        showError(err, { prefix: `cannot show turn ${turn.turnId}: ` });
      }
    }),

    registerCommand('rehearsal.showCallDiff', async (target) => {
      const chosen = target ? toCallTarget(target) : await pickCall(services);
      if (!chosen) return;
      try {
        await callDiffs.show(chosen.file, chosen.callId);
        const node = callTreeNode(library, chosen.file, chosen.callId, explorer.options());
        if (node && view.visible)
          await view.reveal(node, { select: true, focus: false }).then(undefined, () => undefined);
      } catch (err) {
        showError(err, { prefix: `cannot show call ${chosen.callId}: ` });
      }
    }),

    registerCommand('rehearsal.openTrajectory', async (target) => {
      const episode = await resolveEpisode(services, target);
      if (!episode) return undefined;
      const beside = !!target && 'beside' in target && target.beside === true;
      return trajectories.show(episode.file, episode.episodeId, episode.callId, { beside });
    }),
  );
}

/** A whole run: its report, its summary panel, and two runs compared. */
function registerRunViewCommands(context: vscode.ExtensionContext, services: Services): void {
  const { library, callDiffs } = services;
  context.subscriptions.push(
    registerCommand('rehearsal.showReport', async (target) => {
      const file = target?.file ?? (await pickTrace(services));
      if (!file) return;
      try {
        await services.reports.show(file);
      } catch (err) {
        showError(err, { prefix: 'cannot build the report: ' });
      }
    }),

    registerCommand('rehearsal.showRunSummary', async (target) => {
      const file = target?.file ?? (await pickTrace(services, 'Which run?'));
      if (!file) return undefined;
      return services.summaries.show(file);
    }),

    // From the tree with two runs selected (the context menu passes the clicked run and the
    // selection), from one run's row (the other picked), or from the palette (both picked).
    registerCommand('rehearsal.compareRuns', async (first, second) => {
      const rest = Array.isArray(second)
        ? (second as TraceTreeNode[]).filter((n) => n.kind === 'run')
        : second
          ? [second]
          : [];
      const given = [...new Set([first, ...rest].flatMap((n) => (n ? [n.file] : [])))];
      const a =
        given[0] ??
        (await pickTrace(services, 'Compare runs: which run is A (before, or the first policy)?'));
      if (!a) return undefined;
      const b =
        given.find((f) => f !== a) ??
        (await pickTrace(services, 'Compare runs: which run is B (after, or the second policy)?', [
          a,
        ]));
      if (!b) return undefined;
      return new CompareRunsPanel(context.extensionUri, services.output, library, callDiffs, {
        a,
        b,
      });
    }),
  );
}

/** Quick pick of the explorer's order. */
async function pickSort(current: TreeSort): Promise<TreeSort | undefined> {
  return (
    await vscode.window.showQuickPick<vscode.QuickPickItem & { sort: TreeSort }>(
      [
        {
          label: 'As recorded',
          description: current === 'trace' ? 'current' : undefined,
          detail: 'runs → episodes → turns → calls',
          sort: 'trace',
        },
        {
          label: 'Least faithful first',
          description: current === 'fidelity' ? 'current' : undefined,
          detail: "each run's calls in one list: parse errors, tool errors, then by field F1",
          sort: 'fidelity',
        },
      ],
      { title: 'Sort the Trace Explorer' },
    )
  )?.sort;
}

function toCallTarget(target: CallTarget): { file: string; callId: string } | undefined {
  if ('callId' in target) return target;
  return target.kind === 'call' ? { file: target.file, callId: target.entityId } : undefined;
}

/** The episode a command means: given, a tree node's, the Trace Explorer's selection, the active call diff's, or picked. */
async function resolveEpisode(
  services: Services,
  target: EpisodeTarget | undefined,
): Promise<{ file: string; episodeId: string; callId?: string } | undefined> {
  if (target && 'episodeId' in target) return target;
  // From the palette, what is selected in the tree is what the command is about (it asked "Which
  // episode?" with another one preselected).
  const selected =
    !target && services.explorerTree.visible ? services.explorerTree.selection[0] : undefined;
  if (selected && selected.kind !== 'run' && selected.kind !== 'problem')
    return resolveEpisode(services, selected);
  if (target && 'entityId' in target) {
    const index = await services.library.ensureIndex(target.file);
    if (target.kind === 'episode' || target.kind === 'attempt')
      return { file: target.file, episodeId: target.entityId };
    // A memory's row means the committed episode that read it; a call behind a line, that call.
    if ((target.kind === 'memory' || target.kind === 'memoryLine') && target.memory)
      return { file: target.file, episodeId: target.memory.episodeId };
    if (target.kind === 'turn') {
      const t = index?.turn(target.entityId);
      return t ? { file: target.file, episodeId: t.episodeId } : undefined;
    }
    if (target.kind === 'call' || target.kind === 'memoryCall') {
      const c = index?.call(target.entityId);
      return c ? { file: target.file, episodeId: c.episodeId, callId: c.callId } : undefined;
    }
  }
  const active = activeCallTarget();
  if (active) {
    const view = await services.callDiffs.load(active.file, active.callId);
    return { file: active.file, episodeId: view.entry.episodeId, callId: active.callId };
  }
  return pickEpisode(services);
}

/** Quick pick of the filter's criteria (several at once), with the tools of the indexed runs. */
async function pickFilter({ library, explorer }: Services): Promise<TreeFilter | undefined> {
  type Item = vscode.QuickPickItem & { set: (f: TreeFilter) => void };
  const current = explorer.filter;
  const tools = new Set<string>();
  for (const f of library.files) for (const c of library.index(f)?.calls() ?? []) tools.add(c.tool);
  const items: Item[] = [
    {
      label: 'Only mismatches',
      detail: 'calls whose rehearsal was scored and is not exact',
      picked: !!current.mismatches,
      set: (f) => {
        f.mismatches = true;
      },
    },
    {
      label: 'Only annotated',
      detail: 'calls with a fidelity error marked, or an accepted rehearsal',
      picked: !!current.annotated,
      set: (f) => {
        f.annotated = true;
      },
    },
    {
      label: 'Parse errors',
      detail: 'rehearsals and acts that did not parse',
      picked: !!current.parseErrors,
      set: (f) => {
        f.parseErrors = true;
      },
    },
    ...[...tools].sort().map((t): Item => ({
      label: `$(tools) ${t}`,
      description: 'tool',
      picked: !!current.tools?.includes(t),
      set: (f) => {
        f.tools = [...(f.tools ?? []), t];
      },
    })),
  ];
  const picked = await vscode.window.showQuickPick(items, {
    canPickMany: true,
    title: 'Filter the Trace Explorer',
    placeHolder: 'Show only… (criteria combine; none selected shows everything)',
  });
  if (!picked) return undefined;
  const filter: TreeFilter = {};
  for (const p of picked) p.set(filter);
  return filter;
}
