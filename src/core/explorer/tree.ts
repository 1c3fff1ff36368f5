import * as path from 'node:path';
import { counted } from '../base/counted';
import type { CallEntry, EpisodeEntry, TurnEntry } from '../trace/index/entries';
import type { TraceIndex } from '../trace/index/traceIndex';
import type { TraceLibrary } from '../trace/index/library';
import type { TraceTreeNode } from './treeNode';
import { memoryNode } from './memoryTree';
import type { TraceHead } from '../trace/format/traceHead';
import type { AnnotationLookup, TreeFilter, TreeSort } from './treeFilter';
import { callMatches, fidelityRank, isFilterActive, turnMatchesItself } from './treeFilter';
import { describeAnnotation } from '../annotations/schema';
import { shownPolicyPath } from '../trace/format/policyLabel';
import { runIdDate, runIdShort } from '../trace/format/ids';
import { successText } from './successText';
import type { NodeStatus } from '../fidelity/verdicts';
import { episodeOutcome, fidelityBadge, scoreSum, scoreSummary } from '../fidelity/verdicts';

export type { TraceTreeNode } from './treeNode';

/** What shapes the tree besides the traces: the filter, the order, and the annotations of each trace. */
export interface TreeOptions {
  filter?: TreeFilter;
  sort?: TreeSort;
  annotations?: (file: string) => AnnotationLookup | undefined;
  /** How many episodes (or calls, sorted by fidelity) a run shows before a `more` node; default {@link RUN_PAGE_SIZE}. */
  pageSize?: (file: string) => number;
}

/** Children a run shows at first: a tree of tens of thousands of rows helps nobody and slows the editor. */
export const RUN_PAGE_SIZE = 500;

function pct(x: number | null | undefined): string {
  return x === null || x === undefined ? '-' : x.toFixed(2);
}

function annotationBadge(summary: { errors: number; accepted: boolean } | undefined): string {
  if (!summary) return '';
  if (summary.errors) return `⚑ ${summary.errors} · `;
  return summary.accepted ? '✓ accepted · ' : '';
}

function callNode(
  file: string,
  call: CallEntry,
  options: TreeOptions,
  flat = false,
): TraceTreeNode {
  const badge = fidelityBadge(call);
  const s = call.scores;
  const lines = [`${call.tool} (${call.callId})`, `fidelity: ${badge.text}`];
  if (s) {
    lines.push(
      `exact match: ${s.exactMatch ? 'yes' : 'no'}`,
      `field F1: ${pct(s.fieldF1)}`,
      `key Jaccard: ${pct(s.keyJaccard)}`,
      `type agreement: ${pct(s.typeAgreement)}`,
      `error state: ${s.errorAgreement ? 'agrees' : 'differs'}`,
    );
  }
  if (call.counts)
    lines.push(
      `paths: ${call.counts.added} missing · ${call.counts.removed} invented · ${call.counts.changed} changed · ${call.counts.typeChanged} retyped`,
    );
  const annotations = options.annotations?.(file);
  const summary = annotations?.summary(call.callId);
  for (const a of annotations?.forCall(call.callId) ?? [])
    lines.push(
      `⚑ ${describeAnnotation(a)}${a.note && a.verdict === 'error' ? `: ${a.note}` : ''} (${a.author})`,
    );
  const node: TraceTreeNode = {
    kind: 'call',
    id: `${file}#${call.callId}`,
    file,
    entityId: call.callId,
    label: call.tool,
    // What a reviewer acts on first: the marks, then the fidelity (a narrow side bar cuts the end).
    description: `${annotationBadge(summary)}${badge.text}${flat ? ` · ${call.callId}` : ''}`,
    tooltip: lines.join('\n'),
    status: badge.status,
    hasChildren: false,
  };
  if (summary) node.annotations = { errors: summary.errors, accepted: summary.accepted };
  return node;
}

function turnNode(file: string, index: TraceIndex, turn: TurnEntry): TraceTreeNode {
  const calls = index.callsOf(turn);
  let description: string;
  let status: NodeStatus = 'info';
  if (turn.kind === 'error') {
    description = `parse error ${turn.parseError}`;
    status = 'error';
  } else if (turn.kind === 'final') description = `final answer: ${turn.answerPreview ?? ''}`;
  else {
    const worst = calls.map((c) => fidelityBadge(c).status);
    // One call: the call itself on the turn's row ("1 call" told nothing); more: how many, and the worst.
    description =
      calls.length === 1
        ? `${calls[0].tool} · ${fidelityBadge(calls[0]).text}`
        : counted(calls.length, 'call');
    status = worst.includes('error')
      ? 'error'
      : worst.includes('mismatch')
        ? 'mismatch'
        : worst.every((s) => s === 'ok')
          ? 'ok'
          : 'pending';
  }
  const tooltip = [
    `${turn.turnId}: ${description}`,
    ...(calls.length ? [scoreSummary(calls)] : []),
  ].join('\n');
  return {
    kind: 'turn',
    id: `${file}#${turn.turnId}`,
    file,
    entityId: turn.turnId,
    label: `turn ${turn.index + 1}`,
    description,
    tooltip,
    status,
    hasChildren: calls.length > 0,
  };
}

/** The row of an episode. */
export function episodeNode(file: string, index: TraceIndex, ep: EpisodeEntry): TraceTreeNode {
  const { description, status } = episodeOutcome(ep);
  const role = ep.role ? ` (${ep.role})` : '';
  const calls = index.turnsOf(ep).flatMap((t) => index.callsOf(t));
  const tooltip = [
    `episode ${ep.episodeId} of task ${ep.taskId}, mode ${ep.mode}: ${description}`,
    scoreSummary(calls),
  ].join('\n');
  return {
    kind: 'episode',
    id: `${file}#${ep.episodeId}`,
    file,
    entityId: ep.episodeId,
    label: `${ep.episodeId} ${ep.taskId}${role}`,
    description,
    tooltip,
    status,
    // A committed episode opens on the memory it read, from its start.
    hasChildren: ep.turnIds.length > 0 || ep.role === 'committed',
  };
}

function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(0)} MB`;
  return `${Math.max(1, Math.round(n / 1024))} kB`;
}

function lazyRunNode(library: TraceLibrary, file: string, head: TraceHead): TraceTreeNode {
  const runFolder = path.basename(path.dirname(file));
  const run = head.run;
  const progress = library.indexingProgress(file);
  const indexState = progress
    ? `indexing ${Math.floor((100 * progress.scannedBytes) / Math.max(1, progress.totalBytes))}%`
    : 'not indexed';
  const id = run?.runId ?? runFolder;
  const label = runIdShort(id);
  const date = runIdDate(id);
  const parts = [
    run ? run.mode : 'no run event',
    run ? shownPolicyPath(run.policy.id, file) : '',
    formatBytes(head.size),
    indexState,
  ].filter(Boolean);
  const status: NodeStatus = head.runEnd
    ? head.runEnd.status === 'completed'
      ? 'ok'
      : 'error'
    : head.endsCleanly
      ? 'running'
      : 'mismatch';
  const tooltip = [
    id,
    file,
    `${formatBytes(head.size)}: large traces are indexed when opened`,
    ...(head.problem ? [head.problem] : []),
    ...(head.runEnd ? [`ended: ${head.runEnd.status}`] : []),
  ].join('\n');
  return {
    kind: 'run',
    id: `${file}#`,
    file,
    entityId: file,
    label,
    description: [...parts, ...(date ? [date] : [])].join(' · '),
    tooltip,
    status,
    hasChildren: true,
  };
}

/** How a run's episodes ended: graded ones, their successes, and those that failed to play. */
function episodeOutcomes(index: TraceIndex): {
  ended: number;
  graded: number;
  successes: number;
  failed: number;
} {
  let ended = 0,
    graded = 0,
    successes = 0,
    failed = 0;
  for (const ep of index.episodes) {
    const end = ep.end;
    if (!end) continue;
    ended++;
    if (end.status === 'failed') failed++;
    if (end.success === true || end.success === false) {
      graded++;
      if (end.success) successes++;
    }
  }
  return { ended, graded, successes, failed };
}

/** The run node of a trace file (or a problem node when it could not be read). */
function runScoreSummary(index: TraceIndex): string {
  const sum = scoreSum();
  index.forEachCallOutcome(sum.add);
  return sum.text();
}

export function runNode(library: TraceLibrary, file: string): TraceTreeNode {
  const index = library.index(file);
  const runFolder = path.basename(path.dirname(file));
  if (!index) {
    const head = library.head(file);
    if (head) return lazyRunNode(library, file, head);
    const why = library.failure(file) ?? 'not indexed yet';
    return {
      kind: 'problem',
      id: `${file}#`,
      file,
      entityId: file,
      label: runFolder,
      description: 'unreadable',
      tooltip: why,
      status: 'error',
      hasChildren: false,
    };
  }
  const run = index.run;
  // A torn last line counts as skipped: a crashed run must not look as if it were still running.
  const torn = index.tornLastLine;
  const skippedCount = index.skippedCount + (torn ? 1 : 0);
  const outcome = episodeOutcomes(index);
  // Issue 27: at the default side bar width the whole run id filled the row. The row's label is the
  // id without its start stamp (the date goes last); the mode is said once, by the label when the id
  // begins with it; the success count comes first, then the policy; the episode count only while
  // some episodes have not ended (the success count says how many did).
  const id = run?.runId ?? runFolder;
  const label = runIdShort(id);
  const mode = run ? run.mode : 'no run event';
  const parts = [
    label === mode || label.startsWith(`${mode}-`) ? '' : mode,
    outcome.ended ? successText(outcome.successes, outcome.graded, outcome.ended) : '',
    run ? shownPolicyPath(run.policy.id, file) : '',
    outcome.ended < index.episodes.length ? counted(index.episodes.length, 'episode') : '',
    skippedCount ? counted(skippedCount, 'skipped line') : '',
  ].filter(Boolean);
  const date = runIdDate(id);
  // The icon follows the outcome: a completed run whose episodes failed is not a green check.
  const status: NodeStatus = skippedCount
    ? 'mismatch'
    : !index.runEnd
      ? 'running'
      : index.runEnd.status !== 'completed' || outcome.failed
        ? 'error'
        : outcome.successes < outcome.graded
          ? 'mismatch'
          : 'ok';
  const skipped = [...index.skipped.slice(0, 5), ...(torn ? [torn] : [])]
    .slice(0, 5)
    .map((s) => `line ${s.line}: ${s.reason}`);
  const tooltip = [
    id,
    file,
    ...(parts.includes(mode) ? [] : [mode]),
    ...parts,
    ...(outcome.ended < index.episodes.length ? [] : [counted(index.episodes.length, 'episode')]),
    runScoreSummary(index),
    ...skipped,
  ].join('\n');
  return {
    kind: 'run',
    id: `${file}#`,
    file,
    entityId: file,
    label,
    description: [...parts, ...(date ? [date] : [])].join(' · '),
    tooltip,
    status,
    hasChildren: index.episodes.length > 0,
  };
}

/**
 * The library's trace files, newest run first: by the run's start time, then by run id (ids
 * begin with their start time), unreadable traces last. The library's own order is the order in
 * which files finished indexing, and a run that starts later is added last.
 */
export function tracesNewestFirst(library: TraceLibrary): string[] {
  const key = (file: string) => {
    const run = library.index(file)?.run ?? library.head(file)?.run;
    const readable = library.index(file) !== undefined || library.head(file) !== undefined;
    return { readable, ts: run?.ts ?? '', id: run?.runId ?? path.basename(path.dirname(file)) };
  };
  const desc = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
  return library.files
    .map((file) => ({ file, ...key(file) }))
    .sort((a, b) => Number(b.readable) - Number(a.readable) || desc(a.ts, b.ts) || desc(a.id, b.id))
    .map((k) => k.file);
}

function visibleCalls(
  index: TraceIndex,
  turn: TurnEntry,
  episode: EpisodeEntry | undefined,
  file: string,
  options: TreeOptions,
): CallEntry[] {
  const annotations = options.annotations?.(file);
  return index
    .callsOf(turn)
    .filter((c) => callMatches(options.filter, c, episode, turn, annotations));
}

function turnVisible(
  index: TraceIndex,
  turn: TurnEntry,
  episode: EpisodeEntry | undefined,
  file: string,
  options: TreeOptions,
): boolean {
  return (
    turnMatchesItself(options.filter, turn, episode) ||
    visibleCalls(index, turn, episode, file, options).length > 0
  );
}

function episodeVisible(
  index: TraceIndex,
  episode: EpisodeEntry,
  file: string,
  options: TreeOptions,
): boolean {
  if (!isFilterActive(options.filter)) return true;
  return index.turnsOf(episode).some((t) => turnVisible(index, t, episode, file, options));
}

/** Every call of a trace that passes the filter, least faithful first (ties in recorded order). */
export function callsByFidelity(
  index: TraceIndex,
  file: string,
  options: TreeOptions = {},
): CallEntry[] {
  return callIdsByFidelity(index, file, options).map((id) => index.call(id)!);
}

/**
 * The ids of {@link callsByFidelity}: calls are ranked and filtered on their summaries (no byte
 * locations), so that a page of a large trace builds full entries for its own calls only.
 */
export function callIdsByFidelity(
  index: TraceIndex,
  file: string,
  options: TreeOptions = {},
): string[] {
  return fidelityPage(index, file, options, Infinity).ids;
}

/**
 * The first `limit` ids of {@link callIdsByFidelity}, and how many calls pass the filter. Without a
 * filter, calls are ranked from their outcomes alone (no entry, no id string) and only the page's
 * ids are made: a million-call trace sorts in a fraction of a second.
 */
export function fidelityPage(
  index: TraceIndex,
  file: string,
  options: TreeOptions,
  limit: number,
): { ids: string[]; total: number } {
  if (!isFilterActive(options.filter)) {
    const ranks = new Float64Array(index.callCount);
    index.forEachCallOutcome((o, n) => {
      ranks[n] = fidelityRank(o);
    });
    const order = new Uint32Array(ranks.length);
    for (let n = 0; n < order.length; n++) order[n] = n;
    order.sort((a, b) => ranks[a] - ranks[b] || a - b);
    const page = order.subarray(0, Math.min(order.length, limit));
    return { ids: Array.from(page, (n) => index.callIdAt(n)), total: order.length };
  }
  const annotations = options.annotations?.(file);
  const ids = index
    .callSummaries()
    .map((c, order) => ({ c, order }))
    .filter(({ c }) =>
      callMatches(options.filter, c, index.episode(c.episodeId), index.turn(c.turnId), annotations),
    )
    .sort((a, b) => fidelityRank(a.c) - fidelityRank(b.c) || a.order - b.order)
    .map(({ c }) => c.callId);
  return { ids: ids.slice(0, limit), total: ids.length };
}

function moreNode(file: string, hidden: number, what: string): TraceTreeNode[] {
  if (hidden <= 0) return [];
  const label = `${hidden.toLocaleString('en-US')} more ${what}${hidden === 1 ? '' : 's'}…`;
  return [
    {
      kind: 'more',
      id: `${file}#more`,
      file,
      entityId: file,
      label,
      description: 'show more',
      tooltip: 'Show the next page, or filter and search to narrow the list.',
      status: 'info',
      hasChildren: false,
    },
  ];
}

function messageNode(file: string, text: string, tooltip: string): TraceTreeNode {
  return {
    kind: 'message',
    id: `${file}#message`,
    file,
    entityId: file,
    label: text,
    description: '',
    tooltip,
    status: 'running',
    hasChildren: false,
  };
}

/** Children of a node (the run nodes, newest first, when `node` is undefined), read from the indexes. */
export function traceTreeChildren(
  library: TraceLibrary,
  node?: TraceTreeNode,
  options: TreeOptions = {},
): TraceTreeNode[] {
  if (!node) {
    return tracesNewestFirst(library)
      .filter((f) => {
        const index = library.index(f);
        if (!index || !isFilterActive(options.filter)) return true; // large traces stay: opening one indexes it
        return index.episodes.some((e) => episodeVisible(index, e, f, options));
      })
      .map((f) => runNode(library, f));
  }
  const index = library.index(node.file);
  if (!index) {
    if (node.kind !== 'run' || !library.head(node.file)) return [];
    const progress = library.indexingProgress(node.file);
    const percent = progress
      ? Math.floor((100 * progress.scannedBytes) / Math.max(1, progress.totalBytes))
      : 0;
    return [
      messageNode(
        node.file,
        `Indexing… ${percent}%`,
        'Large traces are indexed when first opened; their episodes appear when it is done. The index is then saved beside the trace (trace.index), so the next open reads it instead.',
      ),
    ];
  }
  switch (node.kind) {
    case 'run': {
      const limit = options.pageSize?.(node.file) ?? RUN_PAGE_SIZE;
      if (options.sort === 'fidelity') {
        const { ids, total } = fidelityPage(index, node.file, options, limit);
        return [
          ...ids.map((id) => callNode(node.file, index.call(id)!, options, true)),
          ...moreNode(node.file, total - limit, 'call'),
        ];
      }
      if (!isFilterActive(options.filter)) {
        // Without a filter every episode is shown: the page is built, not the whole list.
        return [
          ...index.episodesIn(0, limit).map((e) => episodeNode(node.file, index, e)),
          ...moreNode(node.file, index.episodeCount - limit, 'episode'),
        ];
      }
      const shown: TraceTreeNode[] = [];
      let hidden = 0;
      for (const e of index.episodes) {
        if (!episodeVisible(index, e, node.file, options)) continue;
        if (shown.length < limit) shown.push(episodeNode(node.file, index, e));
        else hidden++;
      }
      return [...shown, ...moreNode(node.file, hidden, 'episode')];
    }
    case 'episode': {
      const ep = index.episode(node.entityId);
      if (!ep) return [];
      return [
        ...(ep.role === 'committed' ? [memoryNode(node.file, index, ep)] : []),
        ...index
          .turnsOf(ep)
          .filter((t) => turnVisible(index, t, ep, node.file, options))
          .map((t) => turnNode(node.file, index, t)),
      ];
    }
    case 'turn': {
      const turn = index.turn(node.entityId);
      return turn
        ? visibleCalls(index, turn, index.episode(turn.episodeId), node.file, options).map((c) =>
            callNode(node.file, c, options),
          )
        : [];
    }
    default:
      return [];
  }
}

/** The parent of a node, so that hosts can reveal any node. */
export function traceTreeParent(
  library: TraceLibrary,
  node: TraceTreeNode,
  options: TreeOptions = {},
): TraceTreeNode | undefined {
  if (node.kind === 'message' || node.kind === 'more')
    return library.index(node.file) || library.head(node.file)
      ? runNode(library, node.file)
      : undefined;
  const index = library.index(node.file);
  if (!index || node.kind === 'run' || node.kind === 'problem') return undefined;
  if (node.kind === 'episode') return runNode(library, node.file);
  if (node.kind === 'turn') {
    const ep = index.episode(index.turn(node.entityId)?.episodeId ?? '');
    return ep ? episodeNode(node.file, index, ep) : undefined;
  }
  if (options.sort === 'fidelity') return runNode(library, node.file);
  const turn = index.turn(index.call(node.entityId)?.turnId ?? '');
  return turn ? turnNode(node.file, index, turn) : undefined;
}

/** The node of a call, to reveal it. */
export function callTreeNode(
  library: TraceLibrary,
  file: string,
  callId: string,
  options: TreeOptions = {},
): TraceTreeNode | undefined {
  const call = library.index(file)?.call(callId);
  return call ? callNode(file, call, options, options.sort === 'fidelity') : undefined;
}
