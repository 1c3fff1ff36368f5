import { counted } from '../base/counted';
import type { EpisodeEntry } from '../trace/index/entries';
import type { TraceLibrary } from '../trace/index/library';
import type { TraceIndex } from '../trace/index/traceIndex';
import type { MemoryAttempt, MemoryLine, RehearsalMemory } from './rehearsalMemory';
import { imaginedAttemptsOf, loadRehearsalMemory, memoryKindOf } from './rehearsalMemory';
import type { TraceTreeNode } from './treeNode';

/**
 * The Trace Explorer's rows of a committed episode's rehearsal memory (private rehearsal): a
 * `memory` row first under the episode; under it the memory's lines (an `outcomes` line opens on the
 * imagined calls that made it, or on the attempts it names), then the imagined attempts it was made
 * from, each saying which lines it contributed. A call row opens that call's diff; an attempt row
 * opens its Trajectory.
 */

/** Rows of a memory's text shown at most; the rest are counted on one row. */
export const MAX_MEMORY_ROWS = 100;

/** The kinds of row under a memory. */
export const MEMORY_NODE_KINDS: readonly TraceTreeNode['kind'][] = [
  'memory',
  'memoryLine',
  'attempt',
  'memoryCall',
];

/** True for a row of a rehearsal memory (its children are read from the trace, asynchronously). */
export function isMemoryNode(node: TraceTreeNode): boolean {
  return MEMORY_NODE_KINDS.includes(node.kind);
}

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);
const numbers = (list: readonly number[]) => list.map((n) => n + 1).join(', ');

/** `attempts 1, 2` / `attempt 3`. */
function attemptsText(attempts: readonly number[]): string {
  return `${plural(attempts.length, 'attempt', 'attempts')} ${attempts.join(', ')}`;
}

/** The memory row of a committed episode, the first of its children. */
export function memoryNode(file: string, index: TraceIndex, ep: EpisodeEntry): TraceTreeNode {
  const kind = memoryKindOf(index.run?.settings);
  const attempts = imaginedAttemptsOf(index, ep);
  const from = attempts.length
    ? `from ${counted(attempts.length, 'imagined attempt')} (${attempts[0].episodeId}${attempts.length > 1 ? `–${attempts.at(-1)!.episodeId}` : ''})`
    : 'from no imagined attempt';
  return {
    kind: 'memory',
    id: `${file}#${ep.episodeId}/memory`,
    file,
    entityId: ep.episodeId,
    label: 'rehearsal memory',
    description: [kind, from].filter(Boolean).join(' · '),
    tooltip: `The rehearsal memory ${ep.episodeId} read, ${from}.${kind === 'outcomes' ? ' Each line opens on the imagined calls that made it.' : ''}`,
    status: 'info',
    hasChildren: true,
    memory: { episodeId: ep.episodeId },
  };
}

function lineNode(
  file: string,
  memory: RehearsalMemory,
  line: MemoryLine,
  n: number,
): TraceTreeNode {
  const from = memory.mapped && line.attempts.length ? attemptsText(line.attempts) : '';
  const calls = line.calls.map((c) => `attempt ${c.attempt} (${c.episodeId}): ${c.callId}`);
  return {
    kind: 'memoryLine',
    id: `${file}#${memory.episodeId}/memory/${n}`,
    file,
    entityId: memory.episodeId,
    label: line.text || ' ',
    description: from,
    tooltip: [line.text, ...(from ? [`from ${from}`] : []), ...calls].join('\n'),
    status: 'info',
    hasChildren: memory.mapped && (line.calls.length > 0 || line.attempts.length > 0),
    memory: { episodeId: memory.episodeId, line: n },
  };
}

function attemptNode(
  file: string,
  memory: RehearsalMemory,
  attempt: MemoryAttempt,
  underLine?: number,
): TraceTreeNode {
  const lines =
    memory.mapped && underLine === undefined
      ? attempt.lines.length
        ? `${plural(attempt.lines.length, 'line', 'lines')} ${numbers(attempt.lines)}`
        : 'no line'
      : '';
  return {
    kind: 'attempt',
    id: `${file}#${memory.episodeId}/memory/${underLine ?? 'attempts'}/${attempt.episodeId}`,
    file,
    entityId: attempt.episodeId,
    label: `attempt ${attempt.attempt}`,
    description: [attempt.episodeId, attempt.description, lines].filter(Boolean).join(' · '),
    tooltip: `Imagined attempt ${attempt.attempt}: episode ${attempt.episodeId}, ${attempt.description}.${lines ? ` It made ${lines} of the memory.` : ''} Opens its Trajectory.`,
    status: attempt.status,
    hasChildren: false,
    memory: {
      episodeId: memory.episodeId,
      ...(underLine !== undefined ? { line: underLine } : {}),
    },
  };
}

function callNode(
  file: string,
  memory: RehearsalMemory,
  call: MemoryLine['calls'][number],
  line: number,
): TraceTreeNode {
  return {
    kind: 'memoryCall',
    id: `${file}#${memory.episodeId}/memory/${line}/${call.callId}`,
    file,
    entityId: call.callId,
    label: `attempt ${call.attempt} · ${call.tool}`,
    description: call.callId,
    tooltip: `The imagined call ${call.callId} of attempt ${call.attempt} (${call.episodeId}) that made this line. Opens its diff.`,
    status: 'info',
    hasChildren: false,
    memory: { episodeId: memory.episodeId, line },
  };
}

/** A row in place of what cannot be shown (no memory recorded, lines not traced, lines left out). */
function noteNode(
  file: string,
  memory: RehearsalMemory,
  name: string,
  label: string,
  tooltip: string,
): TraceTreeNode {
  return {
    kind: 'memoryLine',
    id: `${file}#${memory.episodeId}/memory/${name}`,
    file,
    entityId: memory.episodeId,
    label,
    description: '',
    tooltip,
    status: 'mismatch',
    hasChildren: false,
    memory: { episodeId: memory.episodeId },
  };
}

/** The rows under the memory row: a note if need be, its lines, then its attempts. */
function memoryRows(file: string, memory: RehearsalMemory): TraceTreeNode[] {
  const rows: TraceTreeNode[] = [];
  if (memory.text === undefined)
    rows.push(
      noteNode(
        file,
        memory,
        'none',
        'no memory recorded',
        'The episode recorded no memory: its tools did not start, so it read none.',
      ),
    );
  if (memory.unmapped)
    rows.push(noteNode(file, memory, 'unmapped', 'lines not traced to attempts', memory.unmapped));
  rows.push(
    ...memory.lines.slice(0, MAX_MEMORY_ROWS).map((line, n) => lineNode(file, memory, line, n)),
  );
  const hidden = memory.lines.length - MAX_MEMORY_ROWS;
  if (hidden > 0)
    rows.push(
      noteNode(
        file,
        memory,
        'more',
        `${hidden} more ${plural(hidden, 'line', 'lines')}…`,
        memory.text ?? '',
      ),
    );
  rows.push(...memory.attempts.map((a) => attemptNode(file, memory, a)));
  return rows;
}

/** The rows under a line: the imagined calls that made it, or the attempts it names. */
function lineRows(file: string, memory: RehearsalMemory, n: number): TraceTreeNode[] {
  const line = memory.lines[n];
  if (!line || !memory.mapped) return [];
  if (line.calls.length) return line.calls.map((c) => callNode(file, memory, c, n));
  return memory.attempts
    .filter((a) => line.attempts.includes(a.attempt))
    .map((a) => attemptNode(file, memory, a, n));
}

/** Children of a memory row, read from the trace (as it grows: the memory is there from its start). */
export async function memoryTreeChildren(
  library: TraceLibrary,
  node: TraceTreeNode,
): Promise<TraceTreeNode[]> {
  const index = library.index(node.file);
  const at = node.memory;
  if (!index || !at || (node.kind !== 'memory' && node.kind !== 'memoryLine')) return [];
  const memory = await loadRehearsalMemory(index, at.episodeId);
  if (!memory) return [];
  if (node.kind === 'memory') return memoryRows(node.file, memory);
  return at.line === undefined ? [] : lineRows(node.file, memory, at.line);
}

/** The parent of a memory row, so that hosts can reveal it. */
export async function memoryTreeParent(
  library: TraceLibrary,
  node: TraceTreeNode,
  episodeNode: (file: string, episode: EpisodeEntry) => TraceTreeNode,
): Promise<TraceTreeNode | undefined> {
  const index = library.index(node.file);
  const at = node.memory;
  const episode = at && index?.episode(at.episodeId);
  if (!index || !at || !episode) return undefined;
  if (node.kind === 'memory') return episodeNode(node.file, episode);
  if (node.kind === 'memoryLine' || at.line === undefined)
    return memoryNode(node.file, index, episode);
  const memory = await loadRehearsalMemory(index, at.episodeId);
  const line = memory?.lines[at.line];
  return memory && line ? lineNode(node.file, memory, line, at.line) : undefined;
}
