import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import { exportRows } from '../../src/core/training/exportRows';
import { SAMPLE_TOOLS } from '../builders/samples';
import { TraceBuilder } from '../builders/traceBuilder';
import { useTempDir } from '../support/tempDir';

const lookup =
  '\n<tool_call>\n{"name": "get_order_details", "arguments": {"order_id": "#W1"}}\n</tool_call>';

/** An imagined run of one task: an episode that finished, and one a broken call fragment ended. */
async function imaginedRun(dir: string): Promise<string> {
  const t = new TraceBuilder('20261206-190000-imagine-finished', 'imagine');
  // The run's sampling: each role at a temperature of its own.
  Object.assign(t.events[0], {
    settings: {
      sampling: { act: { temperature: 1, seed: 0 }, rehearse: { temperature: 0.6, seed: 1 } },
    },
  });
  const done = t.episode('retail-train-0001', {
    instruction: 'Is #W1 pending?',
    tools: SAMPLE_TOOLS,
  });
  done.turn(lookup, 'Is #W1 pending?').rehearse(0, { order_id: '#W1', status: 'pending' });
  done.turn('Yes, it is pending.');
  done.end({ reward: 0.5, success: false, answer: 'Yes, it is pending.' });
  const broken = t.episode('retail-train-0001', {
    instruction: 'Is #W1 pending?',
    tools: SAMPLE_TOOLS,
  });
  broken.turn(lookup, 'Is #W1 pending?').rehearse(0, { order_id: '#W1', status: 'pending' });
  broken.turn('Yes, it is pending"}}\n</tool_call>');
  broken.end({
    status: 'failed',
    reward: 0,
    success: false,
    error: { code: 'NO_TOOL_CALL_FOUND', message: 'a fragment of a call' },
  });
  const file = path.join(dir, 'runs', 'r1', 'trace.jsonl');
  await t.end().write(file);
  return file;
}

async function rowsOf(file: string, actSource: 'rollout' | 'demonstration'): Promise<DatasetRow[]> {
  const out: DatasetRow[] = [];
  await exportRows([file], { actSource, roles: ['act', 'rehearse'], policyRehearsals: true }, (r) =>
    out.push(r),
  );
  return out;
}

describe('rollout rows say whether their episode finished and how they were sampled', () => {
  const tmp = useTempDir();

  it('every row of a completed episode is finished, every row of one that ended on a parse error is not', async () => {
    const rows = await rowsOf(await imaginedRun(tmp()), 'rollout');
    const byEpisode = new Map<string, Set<boolean | undefined>>();
    for (const r of rows) {
      const seen = byEpisode.get(r.episode!) ?? new Set();
      seen.add(r.finished);
      byEpisode.set(r.episode!, seen);
    }
    assert.deepEqual(
      [...byEpisode.entries()],
      [
        ['e1', new Set([true])],
        ['e2', new Set([false])],
      ],
    );
    assert.ok(rows.some((r) => r.role === 'rehearse' && r.finished === false));
  });

  it('demonstration rows carry no such field, nor a sampling temperature', async () => {
    const rows = await rowsOf(await imaginedRun(tmp()), 'demonstration');
    assert.ok(rows.length > 0);
    assert.ok(rows.every((r) => !('finished' in r) && !('temperature' in r)));
  });

  it("every rollout row carries its role's sampling temperature", async () => {
    const rows = await rowsOf(await imaginedRun(tmp()), 'rollout');
    const byRole = (role: string) =>
      new Set(rows.filter((r) => r.role === role).map((r) => r.temperature));
    assert.deepEqual(byRole('act'), new Set([1]));
    assert.deepEqual(byRole('rehearse'), new Set([0.6]));
  });
});
