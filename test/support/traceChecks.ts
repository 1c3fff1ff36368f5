import * as assert from 'node:assert/strict';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import type {
  CallActualEvent,
  CallRehearsalEvent,
  EpisodeEndEvent,
  EpisodeEvent,
  FidelityEvent,
  RunEndEvent,
  RunEvent,
  TraceEvent,
  TurnEvent,
} from '../../src/core/trace/format/schema';

/** A trace read back through the studio's reader: every line valid against schemas/trace.schema.json. */
export interface CheckedTrace {
  events: TraceEvent[];
  run: RunEvent;
  end: RunEndEvent;
  episodes: EpisodeEvent[];
  turns: TurnEvent[];
  rehearsals: CallRehearsalEvent[];
  actuals: CallActualEvent[];
  fidelities: FidelityEvent[];
  ends: EpisodeEndEvent[];
  /** Events of one episode, in file order. */
  of(episodeId: string): TraceEvent[];
}

/**
 * Reads a trace with `readTraceEvents` (schema validation of every line), requires zero skipped
 * lines, and checks the event order of docs/trace-format.md.
 */
export async function readCheckedTrace(file: string): Promise<CheckedTrace> {
  const { events, skipped } = await readTraceEvents(file);
  assert.deepEqual(skipped, [], `${file}: lines skipped by the reader`);
  assertEventOrder(events);
  const pick = <T extends TraceEvent['type']>(type: T) =>
    events.filter((e): e is Extract<TraceEvent, { type: T }> => e.type === type);
  return {
    events,
    run: events[0] as RunEvent,
    end: events.at(-1) as RunEndEvent,
    episodes: pick('episode'),
    turns: pick('turn'),
    rehearsals: pick('call.rehearsal'),
    actuals: pick('call.actual'),
    fidelities: pick('fidelity'),
    ends: pick('episode.end'),
    of: (episodeId) => events.filter((e) => 'episodeId' in e && e.episodeId === episodeId),
  };
}

/**
 * The order of docs/trace-format.md: `run` first and `run.end` last; per episode, `episode`, then for
 * each act a `turn` followed by its calls (in the order the turn lists them), each call's
 * `call.rehearsal` before its `call.actual` before its `fidelity` (fidelity only when both exist), and
 * `episode.end` last. Episodes may interleave (private rehearsal in parallel); their own events may not.
 */
export function assertEventOrder(events: readonly TraceEvent[]): void {
  assert.ok(events.length >= 2, 'a trace has at least run and run.end');
  assert.equal(events[0].type, 'run', 'the first event is run');
  assert.equal(events.at(-1)!.type, 'run.end', 'the last event is run.end');
  assert.equal(
    events.filter((e) => e.type === 'run' || e.type === 'run.end').length,
    2,
    'one run and one run.end',
  );
  const runId = (events[0] as RunEvent).runId;
  assert.equal((events.at(-1) as RunEndEvent).runId, runId);

  interface EpisodeState {
    ended: boolean;
    turnIndex: number;
    callOrder: string[];
    current: number;
    calls: Map<string, string[]>;
  }
  const episodes = new Map<string, EpisodeState>();
  for (const [at, e] of events.entries()) {
    if (e.type === 'run' || e.type === 'run.end') continue;
    const where = `event ${at + 1} (${e.type} of ${e.episodeId})`;
    if (e.type === 'episode') {
      assert.ok(!episodes.has(e.episodeId), `${where}: episode started twice`);
      episodes.set(e.episodeId, {
        ended: false,
        turnIndex: -1,
        callOrder: [],
        current: 0,
        calls: new Map(),
      });
      continue;
    }
    const state = episodes.get(e.episodeId);
    assert.ok(state, `${where}: before its episode event`);
    assert.ok(!state.ended, `${where}: after its episode.end`);
    switch (e.type) {
      case 'turn': {
        assert.equal(e.index, state.turnIndex + 1, `${where}: turn indices count up from 0`);
        state.turnIndex = e.index;
        state.callOrder = e.parse.kind === 'calls' ? e.parse.calls.map((c) => c.callId) : [];
        state.current = 0;
        for (const id of state.callOrder) state.calls.set(id, []);
        break;
      }
      case 'call.rehearsal':
      case 'call.actual':
      case 'fidelity': {
        const k = state.callOrder.indexOf(e.callId);
        assert.ok(k >= 0, `${where}: call ${e.callId} is not a call of the latest turn`);
        // Calls are played one after the other, in the order the turn lists them.
        assert.ok(
          k >= state.current,
          `${where}: call ${e.callId} comes after a later call of its turn`,
        );
        state.current = k;
        const seen = state.calls.get(e.callId)!;
        if (e.type === 'call.rehearsal')
          assert.deepEqual(seen, [], `${where}: the rehearsal comes first, once`);
        if (e.type === 'call.actual')
          assert.ok(
            !seen.includes('call.actual') && !seen.includes('fidelity'),
            `${where}: one actual per call, before its fidelity`,
          );
        if (e.type === 'fidelity')
          assert.deepEqual(
            seen,
            ['call.rehearsal', 'call.actual'],
            `${where}: fidelity follows a rehearsal and an actual`,
          );
        seen.push(e.type);
        break;
      }
      case 'episode.end':
        state.ended = true;
        break;
    }
  }
  for (const [id, state] of episodes) assert.ok(state.ended, `episode ${id} has no episode.end`);
}
