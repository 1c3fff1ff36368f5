import type { JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import type { NodeStatus } from '../fidelity/verdicts';
import { episodeOutcome } from '../fidelity/verdicts';
import { actualOutcome } from '../runner/episode';
import type { AttemptCall, ImaginedAttempt } from '../runner/outcomesMemory';
import { imaginedWriteLine, outcomesMemoryLines } from '../runner/outcomesMemory';
import { MEMORY_CONTEXT_HEADING } from '../runner/privateRehearsal';
import type { MemoryKind } from '../runner/settings';
import { MEMORY_KINDS } from '../runner/settings';
import { imaginedToolResult } from '../runner/toolMessages';
import type {
  CallActualEvent,
  CallRehearsalEvent,
  EpisodeEndEvent,
  EpisodeEvent,
} from '../trace/format/schema';
import type { CallEntry, EpisodeEntry } from '../trace/index/entries';
import type { TraceIndex } from '../trace/index/traceIndex';

/** An imagined write behind a line of an `outcomes` memory. */
export interface MemoryLineCall {
  /** The attempt's number (1-based), as the memory counts them. */
  attempt: number;
  /** The imagined episode of that attempt. */
  episodeId: string;
  callId: string;
  tool: string;
}

/** One line of a rehearsal memory. */
export interface MemoryLine {
  text: string;
  /** The attempts (1-based) behind it; empty where the memory's lines are not mapped. */
  attempts: number[];
  /** The imagined writes behind it; empty on a line that names attempts without a write. */
  calls: MemoryLineCall[];
}

/** One imagined attempt that a committed episode's memory was made from. */
export interface MemoryAttempt {
  /** 1-based, in the order the attempts were played: the number the memory's lines use. */
  attempt: number;
  episodeId: string;
  /** How it ended, in the tree's words (`failure · reward 0.00`, `running`). */
  description: string;
  status: NodeStatus;
  /** The memory's lines (0-based) it contributed to; empty where the lines are not mapped. */
  lines: number[];
}

/** What a committed episode of private rehearsal read, and what it was made from. */
export interface RehearsalMemory {
  /** The committed episode. */
  episodeId: string;
  /** The memory kind its run names (`run.settings.privateRehearsal.memory`); undefined when the run does not say. */
  kind?: MemoryKind;
  /**
   * The memory as the committed episode read it: its end's `memory`, or, while it plays, the
   * memory in its start's context. Undefined when neither was recorded (its tools did not start).
   */
  text?: string;
  lines: MemoryLine[];
  attempts: MemoryAttempt[];
  /**
   * True when each line names the attempts behind it: an `outcomes` memory whose lines the core's
   * own builder made again, from the imagined attempts in the trace, exactly as recorded.
   */
  mapped: boolean;
  /** Why an `outcomes` memory's lines could not be mapped to its attempts. */
  unmapped?: string;
}

/**
 * The memory kind a run's settings name: `condensed` (the default) when its private rehearsal
 * settings name none; undefined when the run records no such settings.
 */
export function memoryKindOf(
  settings: { [key: string]: JsonValue } | undefined,
): MemoryKind | undefined {
  const privateRehearsal = settings?.['privateRehearsal'];
  if (!isJsonObject(privateRehearsal)) return undefined;
  const kind = privateRehearsal['memory'];
  if (kind === undefined) return 'condensed';
  return MEMORY_KINDS.find((k) => k === kind);
}

/** The run's private rehearsal budget, when its settings name one. */
function budgetOf(settings: { [key: string]: JsonValue } | undefined): number | undefined {
  const privateRehearsal = settings?.['privateRehearsal'];
  const budget = isJsonObject(privateRehearsal) ? privateRehearsal['budget'] : undefined;
  return typeof budget === 'number' && Number.isInteger(budget) && budget >= 0 ? budget : undefined;
}

/**
 * The imagined episodes a committed one was conditioned on: those right before it, of its task
 * (the runner numbers a task's attempts, then its committed episode, one after another), at most
 * the run's budget of them.
 */
export function imaginedAttemptsOf(index: TraceIndex, committed: EpisodeEntry): EpisodeEntry[] {
  const budget = budgetOf(index.run?.settings);
  const byIndex = new Map(index.episodes.map((e) => [e.index, e]));
  const attempts: EpisodeEntry[] = [];
  for (let i = committed.index - 1; i >= 0; i--) {
    if (budget !== undefined && attempts.length >= budget) break;
    const e = byIndex.get(i);
    if (!e || e.role !== 'imagined' || e.taskId !== committed.taskId) break;
    attempts.unshift(e);
  }
  return attempts;
}

/** A call of an imagined episode as its transcript had it: it continued on the rehearsal. */
async function attemptCall(index: TraceIndex, call: CallEntry): Promise<AttemptCall> {
  const base = { callId: call.callId, name: call.tool };
  if (call.rehearsal) {
    const rehearsal = (await index.readEvent(call.rehearsal)) as CallRehearsalEvent;
    return {
      ...base,
      arguments: rehearsal.arguments,
      outcome: { response: imaginedToolResult(rehearsal.result) },
    };
  }
  // A call over the turn's limit was never made: the runner records why as its actual.
  if (call.actual) {
    const actual = (await index.readEvent(call.actual)) as CallActualEvent;
    return { ...base, arguments: null, outcome: actualOutcome(actual) };
  }
  return { ...base, arguments: null };
}

/** An imagined episode read back from the trace as the memory's builder reads an attempt. */
async function readAttempt(index: TraceIndex, episode: EpisodeEntry): Promise<ImaginedAttempt> {
  const turns: { calls: AttemptCall[] }[] = [];
  for (const turn of index.turnsOf(episode)) {
    const calls: AttemptCall[] = [];
    for (const call of index.callsOf(turn)) calls.push(await attemptCall(index, call));
    turns.push({ calls });
  }
  return { turns };
}

const COUNTED = / \(x\d+\)$/;
const LEFT_OUT = /^\(\d+ more lines?\)$/;

/**
 * Which tools the memory counted as writes, told by the memory itself: the trace does not keep the
 * servers' read-only hints. A tool one of whose calls has its line in the memory is a write; a tool
 * with none is read-only, unless lines were left out (then the name decides, as without hints).
 */
function hintsFromMemory(
  attempts: readonly ImaginedAttempt[],
  recorded: readonly string[],
): Map<string, boolean> {
  const shown = new Set(recorded.map((line) => line.replace(COUNTED, '')));
  const leftOut = LEFT_OUT.test(recorded.at(-1) ?? '');
  const writes = new Set<string>();
  const tools = new Set<string>();
  for (const call of attempts.flatMap((a) => a.turns.flatMap((t) => t.calls))) {
    tools.add(call.name);
    if (shown.has(imaginedWriteLine(call))) writes.add(call.name);
  }
  const hints = new Map<string, boolean>();
  for (const tool of tools)
    if (writes.has(tool)) hints.set(tool, false);
    else if (!leftOut) hints.set(tool, true);
  return hints;
}

/**
 * An `outcomes` memory's lines, each with the attempts and calls behind it, when the core's builder
 * makes the recorded memory again from the attempts; otherwise why not.
 */
function mapOutcomes(
  text: string,
  attempts: readonly ImaginedAttempt[],
  episodes: readonly EpisodeEntry[],
): { lines: MemoryLine[] } | { unmapped: string } {
  const lines = outcomesMemoryLines(attempts, hintsFromMemory(attempts, text.split('\n')));
  if (lines.map((l) => l.text).join('\n') !== text)
    return {
      unmapped:
        'Its lines are not what the imagined attempts in this trace make: the attempts it was made from cannot be told line by line.',
    };
  return {
    lines: lines.map((line) => ({
      text: line.text,
      attempts: line.attempts,
      calls: line.calls.map((c) => ({
        attempt: c.attempt,
        episodeId: episodes[c.attempt - 1].episodeId,
        callId: c.callId!,
        tool: c.tool,
      })),
    })),
  };
}

/** The memory in a committed episode's context, without the heading the runner puts before it. */
function memoryInContext(context: string | undefined): string | undefined {
  if (context === undefined) return undefined;
  const heading = `${MEMORY_CONTEXT_HEADING}\n`;
  return context.startsWith(heading) ? context.slice(heading.length) : context;
}

/**
 * The rehearsal memory a committed episode of private rehearsal read, with the imagined attempts it
 * was made from. An `outcomes` memory's lines are made again by the core's own builder from the
 * attempts as the trace recorded them, so each line names the attempts and calls behind it; a
 * `condensed` or `attempts` memory is its text, with the attempts beside it. Undefined for an
 * episode that is not a committed one. Read as the trace grows: the memory is there from the
 * committed episode's start.
 */
export async function loadRehearsalMemory(
  index: TraceIndex,
  episodeId: string,
): Promise<RehearsalMemory | undefined> {
  const committed = index.episode(episodeId);
  if (committed?.role !== 'committed') return undefined;
  const start = (await index.readEvent(committed.location)) as EpisodeEvent;
  const end = committed.end
    ? ((await index.readEvent(committed.end.location)) as EpisodeEndEvent)
    : undefined;
  const text = end?.memory ?? memoryInContext(start.context);
  const kind = memoryKindOf(index.run?.settings);
  const episodes = imaginedAttemptsOf(index, committed);
  const memory: RehearsalMemory = {
    episodeId,
    ...(kind ? { kind } : {}),
    ...(text !== undefined ? { text } : {}),
    lines: (text ?? '').split('\n').map((line) => ({ text: line, attempts: [], calls: [] })),
    attempts: episodes.map((e, i) => ({
      attempt: i + 1,
      episodeId: e.episodeId,
      ...episodeOutcome(e),
      lines: [],
    })),
    mapped: false,
  };
  if (text === undefined) memory.lines = [];
  // A run that does not name its kind may still hold an outcomes memory: its lines tell.
  if (text === undefined || (kind !== undefined && kind !== 'outcomes')) return memory;
  const attempts = await Promise.all(episodes.map((e) => readAttempt(index, e)));
  const mapped = mapOutcomes(text, attempts, episodes);
  if ('unmapped' in mapped) {
    if (kind === 'outcomes') memory.unmapped = mapped.unmapped;
    return memory;
  }
  memory.lines = mapped.lines;
  memory.mapped = true;
  for (const attempt of memory.attempts)
    attempt.lines = mapped.lines.flatMap((l, n) =>
      l.attempts.includes(attempt.attempt) ? [n] : [],
    );
  return memory;
}
