import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { compareRuns, parseRunsMessage } from '../../src/core/report/compareRuns';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import { TraceBuilder } from '../builders/traceBuilder';
import { useTempDir } from './support/tempDir';

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
      .rehearse(0, { order_id: '#W1', status: statusOf(task) })
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
      ]),
      [
        ['t1', 0, 1, 0.5, 1],
        ['t2', 0, 0, 0.5, 0.5],
      ],
    );
    assert.equal(c.matchedCalls, 2);
    assert.deepEqual(
      c.pairs.map((p) => [p.taskId, p.tool, p.a.verdict, p.b.verdict, p.a.callId, p.b.callId]),
      [['t1', 'get_order_details', 'wrong', 'right', 'e1.t1.c1', 'e1.t1.c1']],
    );
    assert.equal(c.morePairs, 0);
  });

  it('takes only the messages the panel may send', () => {
    assert.ok(
      parseRunsMessage({
        type: 'request',
        id: 2,
        request: { method: 'openPair', a: 'e1.t1.c1', b: 'e1.t1.c1' },
      }),
    );
    assert.equal(
      parseRunsMessage({ type: 'request', id: 2, request: { method: 'deleteRun' } }),
      undefined,
    );
  });
});
