import * as path from 'node:path';
import type { CallEntry, EpisodeEntry, TraceIndex, TurnEntry } from './traceIndex';
import type { TraceLibrary } from './library';

/** How a node should look: drives the icon and colour in any host. */
export type NodeStatus = 'ok' | 'mismatch' | 'error' | 'running' | 'pending' | 'info';

/** A node of the Trace Explorer, as plain data; hosts map it to their own tree items. */
export interface TraceTreeNode {
  kind: 'run' | 'episode' | 'turn' | 'call' | 'problem';
  /** Unique across the library: `<file>#<entity id>`. */
  id: string;
  file: string;
  /** Episode, turn or call id; the file for runs and problems. */
  entityId: string;
  label: string;
  description: string;
  tooltip: string;
  status: NodeStatus;
  hasChildren: boolean;
}

/** A call's fidelity badge: the text shown beside the tool name and its status. */
export function fidelityBadge(call: CallEntry): { text: string; status: NodeStatus } {
  if (call.rehearsalError) return { text: `parse error ${call.rehearsalError}`, status: 'error' };
  if (call.actualError) return { text: `tool error ${call.actualError}`, status: 'error' };
  if (!call.rehearsal || !call.actual) return { text: !call.rehearsal ? 'not rehearsed' : 'waiting for tool', status: 'pending' };
  if (!call.scores) return { text: call.comparable === 'none' ? 'not comparable' : 'not scored', status: 'info' };
  if (call.scores.exactMatch) return { text: 'exact', status: 'ok' };
  const errorState = call.scores.errorAgreement ? '' : ' · error state differs';
  return { text: `F1 ${call.scores.fieldF1.toFixed(2)}${errorState}`, status: 'mismatch' };
}

function pct(x: number | null | undefined): string {
  return x === null || x === undefined ? '-' : x.toFixed(2);
}

function callNode(file: string, call: CallEntry): TraceTreeNode {
  const badge = fidelityBadge(call);
  const s = call.scores;
  const lines = [`${call.tool} (${call.callId})`, `fidelity: ${badge.text}`];
  if (s) {
    lines.push(`exact match: ${s.exactMatch ? 'yes' : 'no'}`, `field F1: ${pct(s.fieldF1)}`, `key Jaccard: ${pct(s.keyJaccard)}`,
      `type agreement: ${pct(s.typeAgreement)}`, `error state: ${s.errorAgreement ? 'agrees' : 'differs'}`);
  }
  if (call.counts) lines.push(`paths: ${call.counts.added} missing · ${call.counts.removed} invented · ${call.counts.changed} changed · ${call.counts.typeChanged} retyped`);
  return { kind: 'call', id: `${file}#${call.callId}`, file, entityId: call.callId, label: call.tool, description: badge.text, tooltip: lines.join('\n'), status: badge.status, hasChildren: false };
}

function turnNode(file: string, index: TraceIndex, turn: TurnEntry): TraceTreeNode {
  const calls = index.callsOf(turn);
  let description: string;
  let status: NodeStatus = 'info';
  if (turn.kind === 'error') { description = `parse error ${turn.parseError}`; status = 'error'; }
  else if (turn.kind === 'final') description = `final answer: ${turn.answerPreview ?? ''}`;
  else {
    const worst = calls.map((c) => fidelityBadge(c).status);
    description = `${calls.length} call${calls.length === 1 ? '' : 's'}`;
    status = worst.includes('error') ? 'error' : worst.includes('mismatch') ? 'mismatch' : worst.every((s) => s === 'ok') ? 'ok' : 'pending';
  }
  return { kind: 'turn', id: `${file}#${turn.turnId}`, file, entityId: turn.turnId, label: `turn ${turn.index + 1}`, description, tooltip: `${turn.turnId}: ${description}`, status, hasChildren: calls.length > 0 };
}

function episodeNode(file: string, ep: EpisodeEntry): TraceTreeNode {
  let description: string;
  let status: NodeStatus;
  if (!ep.end) { description = 'running'; status = 'running'; }
  else if (ep.end.status === 'failed' || ep.end.status === 'cancelled') { description = `${ep.end.status}${ep.end.errorCode ? ` (${ep.end.errorCode})` : ''}`; status = 'error'; }
  else {
    const reward = ep.end.reward === null ? '' : ` · reward ${ep.end.reward.toFixed(2)}`;
    description = `${ep.end.success === null ? 'ungraded' : ep.end.success ? 'success' : 'failure'}${reward}${ep.end.status === 'limit' ? ' · hit a limit' : ''}`;
    status = ep.end.success ? 'ok' : ep.end.success === null ? 'info' : 'mismatch';
  }
  const role = ep.role ? ` (${ep.role})` : '';
  return { kind: 'episode', id: `${file}#${ep.episodeId}`, file, entityId: ep.episodeId, label: `${ep.episodeId} ${ep.taskId}${role}`, description, tooltip: `episode ${ep.episodeId} of task ${ep.taskId}, mode ${ep.mode}: ${description}`, status, hasChildren: ep.turnIds.length > 0 };
}

/** The run node of a trace file (or a problem node when it could not be read). */
export function runNode(library: TraceLibrary, file: string): TraceTreeNode {
  const index = library.index(file);
  const runFolder = path.basename(path.dirname(file));
  if (!index) {
    const why = library.failure(file) ?? 'not indexed yet';
    return { kind: 'problem', id: `${file}#`, file, entityId: file, label: runFolder, description: 'unreadable', tooltip: why, status: 'error', hasChildren: false };
  }
  const run = index.run;
  // A torn last line counts as skipped: a crashed run must not look as if it were still running.
  const skippedLines = index.tornLastLine ? [...index.skipped, index.tornLastLine] : index.skipped;
  const parts = [run ? run.mode : 'no run event', run ? run.policy.id : '', `${index.episodes.length} episode${index.episodes.length === 1 ? '' : 's'}`].filter(Boolean);
  if (skippedLines.length) parts.push(`${skippedLines.length} skipped line${skippedLines.length === 1 ? '' : 's'}`);
  const status: NodeStatus = skippedLines.length ? 'mismatch' : !index.runEnd ? 'running' : index.runEnd.status === 'completed' ? 'ok' : 'error';
  const skipped = skippedLines.slice(0, 5).map((s) => `line ${s.line}: ${s.reason}`);
  const tooltip = [`${run?.runId ?? runFolder}`, file, ...parts, ...skipped].join('\n');
  return { kind: 'run', id: `${file}#`, file, entityId: file, label: run?.runId ?? runFolder, description: parts.join(' · '), tooltip, status, hasChildren: index.episodes.length > 0 };
}

/**
 * The library's trace files, newest run first: by the run's start time, then by run id (ids
 * begin with their start time), unreadable traces last. The library's own order is the order in
 * which files finished indexing, and a run that starts later is added last.
 */
export function tracesNewestFirst(library: TraceLibrary): string[] {
  const key = (file: string) => {
    const run = library.index(file)?.run;
    return { readable: library.index(file) !== undefined, ts: run?.ts ?? '', id: run?.runId ?? path.basename(path.dirname(file)) };
  };
  const desc = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
  return library.files
    .map((file) => ({ file, ...key(file) }))
    .sort((a, b) => Number(b.readable) - Number(a.readable) || desc(a.ts, b.ts) || desc(a.id, b.id))
    .map((k) => k.file);
}

/** Children of a node (the run nodes, newest first, when `node` is undefined), read from the indexes. */
export function traceTreeChildren(library: TraceLibrary, node?: TraceTreeNode): TraceTreeNode[] {
  if (!node) return tracesNewestFirst(library).map((f) => runNode(library, f));
  const index = library.index(node.file);
  if (!index) return [];
  switch (node.kind) {
    case 'run':
      return index.episodes.map((e) => episodeNode(node.file, e));
    case 'episode': {
      const ep = index.episode(node.entityId);
      return ep ? index.turnsOf(ep).map((t) => turnNode(node.file, index, t)) : [];
    }
    case 'turn': {
      const turn = index.turn(node.entityId);
      return turn ? index.callsOf(turn).map((c) => callNode(node.file, c)) : [];
    }
    default:
      return [];
  }
}

/** The parent of a node, so that hosts can reveal any node. */
export function traceTreeParent(library: TraceLibrary, node: TraceTreeNode): TraceTreeNode | undefined {
  const index = library.index(node.file);
  if (!index || node.kind === 'run' || node.kind === 'problem') return undefined;
  if (node.kind === 'episode') return runNode(library, node.file);
  if (node.kind === 'turn') {
    const ep = index.episode(index.turn(node.entityId)?.episodeId ?? '');
    return ep ? episodeNode(node.file, ep) : undefined;
  }
  const turn = index.turn(index.call(node.entityId)?.turnId ?? '');
  return turn ? turnNode(node.file, index, turn) : undefined;
}

/** The node of a call, to reveal it. */
export function callTreeNode(library: TraceLibrary, file: string, callId: string): TraceTreeNode | undefined {
  const call = library.index(file)?.call(callId);
  return call ? callNode(file, call) : undefined;
}
