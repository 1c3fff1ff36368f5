import type { JsonValue } from '../../core/base/json';
import { isJsonObject } from '../../core/base/json';
import type { ToolResultContent } from '../../core/fidelity/responseValue';
import { actualValue } from '../../core/fidelity/responseValue';
import { hasIdentifier } from '../../core/protocol/identifierSlots';
import { rehearsedToolResult } from '../../core/runner/toolMessages';
import type { TraceEvent } from '../../core/trace/format/schema';
import type { LoggedWrite, Verdict } from './memories';
import { verdictOf } from './memories';

// What measure:foresight reads from its traces: the logged writes' true outcomes, the world model's
// and the act's accuracy on the transfer rule, and the calls made on invented ids.

/** The write the foresight family's rule decides. */
export const TRANSFER = 'transfer_between_accounts';

/** The first transfer of each episode of a logging run, with its real response, by task id. */
export function loggedWrites(events: readonly TraceEvent[]): Map<string, LoggedWrite> {
  const taskOf = new Map<string, string>();
  const calls = new Map<string, { name: string; arguments: JsonValue }>();
  const writes = new Map<string, LoggedWrite>();
  for (const e of events) {
    if (e.type === 'episode') taskOf.set(e.episodeId, e.taskId);
    if (e.type === 'turn' && e.parse.kind === 'calls')
      for (const c of e.parse.calls) calls.set(c.callId, c);
    if (e.type !== 'call.actual' || e.tool !== TRANSFER || !e.response) continue;
    const task = taskOf.get(e.episodeId);
    const made = calls.get(e.callId);
    if (!task || !made || writes.has(task)) continue;
    const call = { name: made.name, arguments: made.arguments, outcome: { response: e.response } };
    const verdict = verdictOf(call);
    if (verdict !== 'unknown') writes.set(task, { call, verdict });
  }
  return writes;
}

/** How often a prediction of the rule was right, and its confusion counts (`truth->predicted`). */
export interface RuleAccuracy {
  accuracy: number;
  n: number;
  counts: Record<string, number>;
}

function accuracyOf(pairs: readonly { truth: string; predicted: string }[]): RuleAccuracy {
  const counts: Record<string, number> = {};
  for (const p of pairs) {
    const key = `${p.truth}->${p.predicted}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  const right = pairs.filter((p) => p.truth === p.predicted).length;
  return { accuracy: pairs.length ? right / pairs.length : 0, n: pairs.length, counts };
}

/**
 * The world model's accuracy on the rule: in a replay of logged transfers (`rehearse replay`), each
 * rehearsal's verdict (ok or refused, read as private rehearsal reads an imagined response; a
 * rehearsal that did not parse is `unknown`, and wrong) against the real response's.
 */
export function worldModelAccuracy(events: readonly TraceEvent[]): RuleAccuracy {
  const predicted = new Map<string, Verdict | 'unknown'>();
  const pairs: { truth: string; predicted: string }[] = [];
  for (const e of events) {
    if (e.type === 'call.rehearsal' && e.tool === TRANSFER) {
      const call = { name: e.tool, arguments: e.arguments };
      predicted.set(
        `${e.episodeId}/${e.callId}`,
        e.result.ok
          ? verdictOf({ ...call, outcome: { response: rehearsedToolResult(e.result.value) } })
          : 'unknown',
      );
    }
    if (e.type === 'call.actual' && e.tool === TRANSFER && e.response) {
      const truth = verdictOf({ name: e.tool, arguments: null, outcome: { response: e.response } });
      const said = predicted.get(`${e.episodeId}/${e.callId}`);
      if (truth !== 'unknown' && said !== undefined) pairs.push({ truth, predicted: said });
    }
  }
  return accuracyOf(pairs);
}

/**
 * The act's accuracy on the rule: in an evaluation run (committed or shadow episodes), what the act
 * chose against its task's verdict (`verdicts` by task id): `ok` when it attempted the transfer (it
 * acted as if allowed), `refused` when it answered without attempting it, `unknown` when it did
 * neither (an act that did not parse, a limit), which counts as wrong.
 */
export function actAccuracy(
  events: readonly TraceEvent[],
  verdicts: ReadonlyMap<string, Verdict>,
): RuleAccuracy {
  const taskOf = new Map<string, string>();
  const chose = new Map<string, Verdict | 'unknown'>();
  for (const e of events) {
    if (e.type === 'episode' && e.role !== 'imagined') {
      taskOf.set(e.episodeId, e.taskId);
      chose.set(e.episodeId, 'unknown');
    }
    if (e.type !== 'turn' || chose.get(e.episodeId) === undefined) continue;
    if (e.parse.kind === 'calls' && e.parse.calls.some((c) => c.name === TRANSFER))
      chose.set(e.episodeId, 'ok');
    else if (e.parse.kind === 'final' && chose.get(e.episodeId) === 'unknown')
      chose.set(e.episodeId, 'refused');
  }
  const pairs = [...chose].flatMap(([episode, predicted]) => {
    const truth = verdicts.get(taskOf.get(episode) ?? '');
    return truth ? [{ truth, predicted }] : [];
  });
  return accuracyOf(pairs);
}

/** The string values of a call's arguments that hold an identifier (what identifier slots number). */
function identifierValues(value: JsonValue): string[] {
  if (typeof value === 'string') return hasIdentifier(value) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(identifierValues);
  if (isJsonObject(value)) return Object.values(value).flatMap(identifierValues);
  return [];
}

/** A tool response's text as the policy read it. */
function responseText(response: ToolResultContent): string {
  const value = actualValue(response);
  return value.kind === 'json' ? JSON.stringify(value.value) : value.text;
}

/** Calls on invented ids in an evaluation run's committed (or shadow) episodes. */
export interface InventedIds {
  episodes: number;
  calls: number;
  /** Calls with an identifier argument that appears nowhere in the conversation before the call. */
  inventedCalls: number;
  /** Episodes with at least one such call. */
  episodesWithInvented: number;
}

/**
 * Calls on invented ids (issue 41: "no more invented-id calls than budget 0"): a call one of whose
 * argument values holds an identifier that appears nowhere in what the episode read before the call's
 * turn (the task's system prompt, the user's messages, the real tool responses so far). The memory is
 * not counted as a source: an id there was imagined.
 */
export function inventedIds(events: readonly TraceEvent[]): InventedIds {
  const seen = new Map<string, string[]>();
  const invented = new Set<string>();
  const out: InventedIds = { episodes: 0, calls: 0, inventedCalls: 0, episodesWithInvented: 0 };
  for (const e of events) {
    if (e.type === 'episode' && e.role !== 'imagined') {
      seen.set(e.episodeId, [e.system ?? '', e.instruction ?? '']);
      out.episodes++;
    }
    const known = seen.get('episodeId' in e ? e.episodeId : '');
    if (!known) continue;
    if (e.type === 'turn') {
      if (e.user) known.push(e.user);
      if (e.parse.kind !== 'calls') continue;
      const before = known.join('\n');
      for (const c of e.parse.calls) {
        out.calls++;
        if (identifierValues(c.arguments).some((v) => !before.includes(v))) {
          out.inventedCalls++;
          invented.add(e.episodeId);
        }
      }
    }
    if (e.type === 'call.actual' && e.response) known.push(responseText(e.response));
  }
  out.episodesWithInvented = invented.size;
  return out;
}

/** Accuracies of several runs (seeds) pooled: their counts added. */
export function pooledAccuracy(parts: readonly RuleAccuracy[]): RuleAccuracy {
  const counts: Record<string, number> = {};
  for (const p of parts)
    for (const [k, v] of Object.entries(p.counts)) counts[k] = (counts[k] ?? 0) + v;
  const n = parts.reduce((a, p) => a + p.n, 0);
  const right = Object.entries(counts)
    .filter(([k]) => k.split('->')[0] === k.split('->')[1])
    .reduce((a, [, v]) => a + v, 0);
  return { accuracy: n ? right / n : 0, n, counts };
}

/** Invented-id counts of several runs (seeds) added up. */
export function pooledInventedIds(parts: readonly InventedIds[]): InventedIds {
  const sum = (k: keyof InventedIds) => parts.reduce((a, p) => a + p[k], 0);
  return {
    episodes: sum('episodes'),
    calls: sum('calls'),
    inventedCalls: sum('inventedCalls'),
    episodesWithInvented: sum('episodesWithInvented'),
  };
}
