import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { compareRuns, parseRunsMessage } from '../../src/core/report/compareRuns';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import { TraceBuilder } from '../builders/traceBuilder';
import { useTempDir } from '../support/tempDir';

/** A run of two tasks; `statusOf` is what its policy rehearsed for each task's order. */
async function run(
  dir: string,
  runId: string,
  statusOf: (task: string) => string,
  success: (task: string) => boolean,
): Promise<TraceIndex> {
  const trace = new TraceBuilder(runId, 'shadow', `/m/${runId}`);
  for (const task of ['t1', 't2']) {
    const ep = trace.episode(task);
    ep.turn(
      '\n<tool_call>\n{"name": "get_order_details", "arguments": {"order_id": "#W1"}}\n</tool_call>',
    )
      // `delivered+`: the right status and a field the tool does not give (F1 0.8, not exact).
      .rehearse(
        0,
        statusOf(task).endsWith('+')
          ? { order_id: '#W1', status: statusOf(task).slice(0, -1), note: 'guessed' }
          : { order_id: '#W1', status: statusOf(task) },
      )
      .actual(0, { json: { order_id: '#W1', status: 'delivered' } });
    ep.turn('Done.');
    ep.end({ success: success(task), reward: success(task) ? 1 : 0 });
  }
  const file = path.join(dir, runId, 'trace.jsonl');
  await trace.end().write(file);
  return TraceIndex.build(file);
}

describe('compare runs', () => {
  const tmp = useTempDir();

  it("per task, each run's success and fidelity; the calls one run rehearsed right and the other wrong", async () => {
    const before = await run(
      tmp(),
      'before',
      () => 'pending',
      () => false,
    );
    const after = await run(
      tmp(),
      'after',
      (t) => (t === 't1' ? 'delivered' : 'pending'),
      (t) => t === 't1',
    );
    const c = compareRuns(before, after, (i) => i.run!.policy.id);
    assert.deepEqual([c.a.runId, c.b.runId, c.a.policy], ['before', 'after', '/m/before']);
    assert.deepEqual(
      c.tasks.map((t) => [
        t.taskId,
        t.a?.successes,
        t.b?.successes,
        t.a?.meanFieldF1,
        t.b?.meanFieldF1,
        t.regression,
      ]),
      [
        ['t1', 0, 1, 0.5, 1, false],
        ['t2', 0, 0, 0.5, 0.5, false],
      ],
    );
    assert.equal(c.matchedCalls, 2);
    assert.deepEqual(
      c.pairs.map((p) => [p.taskId, p.tool, p.a.verdict, p.b.verdict, p.a.callId, p.b.callId]),
      [['t1', 'get_order_details', 'wrong', 'right', 'e1.t1.c1', 'e1.t1.c1']],
    );
    assert.deepEqual(c.pairs[0].change, { fieldF1: 0.5, keyJaccard: 0, errorState: 0, parse: 0 });
    assert.equal(c.pairs[0].regression, false);
    assert.equal(c.morePairs, 0);
  });

  it('lists regressions first: a fall of field F1 where neither run was exact, a task lost (issue 27)', async () => {
    // Neither run is ever exact (as the default policy): the old comparison listed nothing.
    const good = await run(
      tmp(),
      'good',
      (t) => (t === 't1' ? 'delivered+' : 'pending'),
      (t) => t === 't1',
    );
    const worse = await run(
      tmp(),
      'worse',
      () => 'pending',
      () => false,
    );
    const c = compareRuns(good, worse, (i) => i.run!.policy.id);
    assert.deepEqual(
      c.tasks.map((t) => [t.taskId, t.regression]),
      [
        ['t1', true],
        ['t2', false],
      ],
    );
    assert.deepEqual(
      c.pairs.map((p) => [p.taskId, p.a.verdict, p.b.verdict, p.regression]),
      [['t1', 'wrong', 'wrong', true]],
    );
    assert.ok((c.pairs[0].change.fieldF1 ?? 0) < 0, JSON.stringify(c.pairs[0]));
    // The other way round: success gained, F1 up, but the invented field costs key Jaccard, so the
    // call is still listed as worse on that score.
    const back = compareRuns(worse, good, (i) => i.run!.policy.id);
    assert.equal(back.tasks.find((t) => t.taskId === 't1')?.regression, false);
    const [pair] = back.pairs;
    assert.ok(
      (pair.change.fieldF1 ?? 0) > 0 && (pair.change.keyJaccard ?? 0) < 0,
      JSON.stringify(pair),
    );
    assert.equal(pair.regression, true);
  });

  it('takes only the messages the panel may send', () => {
    assert.ok(
      parseRunsMessage({
        type: 'request',
        id: 2,
        request: { method: 'openPair', a: 'e1.t1.c1', b: 'e1.t1.c1' },
      }),
    );
    assert.ok(
      parseRunsMessage({
        type: 'request',
        id: 3,
        request: { method: 'openTask', taskId: 'retail-test-0007' },
      }),
    );
    assert.equal(
      parseRunsMessage({ type: 'request', id: 2, request: { method: 'deleteRun' } }),
      undefined,
    );
  });
});
