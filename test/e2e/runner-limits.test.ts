// Limits and cancellation end episodes with the right status and code, with the scripted ONNX policy
// against the real probe server (whose `slow` case answers only after 30 s).
import * as assert from 'node:assert/strict';
import { OK_CASE, SLOW_CASE, TWO_CALLS_CASE, probeTask } from '../support/scriptedModel';
import { RecordingPolicy } from '../support/recordingPolicy';
import { useRuns, useScriptedPolicy } from '../support/runnerFixture';

describe('runner: limits and cancellation', function () {
  this.timeout(120_000);
  const scripted = useScriptedPolicy();
  const { run } = useRuns();

  it('the task\'s turn limit ends the episode as "limit" (TURN_LIMIT) after the last allowed turn\'s calls', async () => {
    const { trace } = await run(scripted(), [probeTask(OK_CASE.case, { maxTurns: 1 })]);
    assert.deepEqual(
      trace.events.map((e) => e.type),
      [
        'run',
        'episode',
        'turn',
        'call.rehearsal',
        'call.actual',
        'fidelity',
        'episode.end',
        'run.end',
      ],
    );
    assert.deepEqual([trace.ends[0].status, trace.ends[0].error?.code], ['limit', 'TURN_LIMIT']);
    assert.match(trace.ends[0].error!.message, /limit of 1 turns/);
    assert.equal(trace.end.status, 'completed');
  });

  it('calls past the per-turn limit are refused: recorded with CALL_LIMIT, neither rehearsed nor run', async () => {
    const policy = new RecordingPolicy(scripted());
    const { trace } = await run(policy, [
      probeTask(TWO_CALLS_CASE, { maxCallsPerTurn: 1, maxTurns: 1 }),
    ]);
    const turn = trace.turns[0];
    assert.deepEqual(turn.parse.kind === 'calls' && turn.parse.calls.map((c) => c.arguments), [
      { case: 'first' },
      { case: 'second' },
    ]);
    assert.deepEqual(
      trace.events.map((e) => e.type),
      [
        'run',
        'episode',
        'turn',
        'call.rehearsal',
        'call.actual',
        'fidelity',
        'call.actual',
        'episode.end',
        'run.end',
      ],
    );
    assert.deepEqual(
      trace.rehearsals.map((r) => r.callId),
      ['e1.t1.c1'],
    );
    assert.deepEqual(
      trace.actuals.map((a) => [a.callId, a.error?.code ?? 'answered']),
      [
        ['e1.t1.c1', 'answered'],
        ['e1.t1.c2', 'CALL_LIMIT'],
      ],
    );
    assert.equal(policy.rehearsals.length, 1);
  });

  it('the episode timeout stops a call that hangs: the call is recorded as cancelled and the episode ends as "limit" (EPISODE_TIMEOUT)', async () => {
    const { summary, trace } = await run(scripted(), [
      probeTask(SLOW_CASE.case, { episodeTimeoutMs: 1500 }),
    ]);
    // The tool answers after 30 s: a call recorded as ending sooner was stopped, not waited for.
    assert.ok(
      (trace.actuals[0].latencyMs ?? Infinity) < 30_000,
      'the run waited for the 30 s tool',
    );
    assert.equal(summary.status, 'completed');
    assert.deepEqual(
      trace.events.map((e) => e.type),
      [
        'run',
        'episode',
        'turn',
        'call.rehearsal',
        'call.actual',
        'fidelity',
        'episode.end',
        'run.end',
      ],
    );
    assert.equal(trace.actuals[0].error?.code, 'CALL_CANCELLED');
    assert.deepEqual(
      [trace.ends[0].status, trace.ends[0].error?.code],
      ['limit', 'EPISODE_TIMEOUT'],
    );
  });

  it('cancelling the run mid-call ends the episode and the run as "cancelled" and starts no further episode', async () => {
    const abort = new AbortController();
    const { summary, trace } = await run(
      scripted(),
      [probeTask(SLOW_CASE.case), probeTask(OK_CASE.case)],
      {},
      {
        signal: abort.signal,
        onEvent: (e) => {
          if (e.type === 'call.rehearsal') setTimeout(() => abort.abort(), 200);
        },
      },
    );
    assert.ok(
      (trace.actuals[0].latencyMs ?? Infinity) < 30_000,
      'the run waited for the 30 s tool',
    );
    assert.equal(summary.status, 'cancelled');
    assert.deepEqual(
      summary.episodes.map((e) => e.status),
      ['cancelled'],
    );
    assert.deepEqual(
      trace.episodes.map((e) => e.taskId),
      ['probe-slow'],
    );
    assert.deepEqual(
      [trace.ends[0].status, trace.ends[0].error?.code, trace.ends[0].reward],
      ['cancelled', 'CANCELLED', null],
    );
    assert.equal(trace.actuals[0].error?.code, 'CALL_CANCELLED');
    assert.equal(trace.end.status, 'cancelled');
  });
});
