// Faulty tools and policies in whole runs: each fault ends in a recorded, coded error within its
// timeout, and the run goes on (a tool) or ends cleanly (a policy). The environment-level faults
// (crash, hang, slow, garbage, 10 MB, a server that will not start) are in env-faults.test.ts; a
// policy host killed mid-generation is in policy-host.test.ts.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { OnnxPolicy } from '../../src/core/policy/onnxPolicy';
import { ReferencePolicy } from '../../src/core/policy/referencePolicy';
import { loadTaskFile } from '../../src/core/tasks/format/loader';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';
import type { CallActualEvent } from '../../src/core/trace/format/schema';
import {
  ensurePolicyHostBundle,
  ensureServerBundles,
  FIXTURES,
  fixtureServer,
  REPO,
} from '../support/servers';
import { useRuns } from '../support/runnerFixture';
import { useTempDir } from '../support/tempDir';

/** Per-call timeout of the faulty task: every fault must be over well within it plus slack. */
const CALL_TIMEOUT_MS = 2500;
const SLACK_MS = 4000;

/** A task on the faulty fixture server whose reference solution calls every faulty tool once, then answers. */
function faultyTask(): TaskFile {
  const call = (name: string, args: Record<string, unknown> = {}) => ({ name, arguments: args });
  return {
    version: 1,
    id: 'faulty-tools',
    description: 'Every tool misbehaves in its own way.',
    turns: [{ user: 'Please try every tool.' }],
    servers: { faulty: fixtureServer('faulty.mjs') },
    tools: ['echo', 'slow', 'hang', 'garbage', 'huge', 'bad_shape', 'crash'],
    checks: [{ id: 'answered', kind: 'answer', turn: 0, contains: ['tried'], weight: 1 }],
    limits: { maxTurns: 12, maxCallsPerTurn: 1, callTimeoutMs: CALL_TIMEOUT_MS },
    reference: {
      turns: [
        {
          calls: [
            call('slow', { ms: 200, tag: 'in-time' }),
            call('hang'),
            call('garbage'),
            call('huge'),
            call('bad_shape'),
            call('crash'),
            call('echo', { message: 'after the crash' }),
          ],
          answer: 'I tried every tool.',
        },
      ],
    },
  } as TaskFile;
}

describe('reliability: faulty tools and policies in whole runs', function () {
  this.timeout(120_000);
  const { run } = useRuns();
  const tmp = useTempDir('rehearsal-faults-');
  before(() => {
    ensureServerBundles();
    ensurePolicyHostBundle();
  });

  it('tools that answer slowly, hang, write garbage, answer 10 MB, answer malformed and crash: each call is recorded with its code within its timeout; the episode reaches its answer; the next episode gets a fresh server', async () => {
    const file = path.join(tmp(), 'faulty-tools.task.json');
    await fs.writeFile(file, JSON.stringify(faultyTask()));
    const task = await loadTaskFile(file);
    const { summary, trace } = await run(new ReferencePolicy([task.task]), [task], {
      episodesPerTask: 2,
    });
    assert.equal(summary.status, 'completed');
    assert.deepEqual(
      summary.episodes.map((e) => [e.status, e.success]),
      [
        ['completed', true],
        ['completed', true],
      ],
    );
    for (const episode of ['e1', 'e2']) {
      const actuals = trace
        .of(episode)
        .filter((e): e is CallActualEvent => e.type === 'call.actual');
      // 10 MB through stdio and the SDK's validation can outlast a short timeout on a loaded machine:
      // either code ends the call in time (env-faults.test.ts checks RESULT_TOO_LARGE with a long timeout).
      const huge = actuals.find((a) => a.tool === 'huge')!;
      assert.ok(
        ['RESULT_TOO_LARGE', 'TOOL_TIMEOUT'].includes(huge.error?.code ?? ''),
        JSON.stringify(huge.error),
      );
      huge.error!.code = 'RESULT_TOO_LARGE';
      assert.deepEqual(
        actuals.map((a) => [a.tool, a.error?.code ?? 'ok']),
        [
          ['slow', 'ok'],
          ['hang', 'TOOL_TIMEOUT'],
          ['garbage', 'PROTOCOL_ERROR'],
          ['huge', 'RESULT_TOO_LARGE'],
          ['bad_shape', 'PROTOCOL_ERROR'],
          ['crash', 'SERVER_CRASHED'],
          ['echo', 'SERVER_CRASHED'],
        ],
        `episode ${episode}`,
      );
      for (const a of actuals)
        assert.ok(
          (a.latencyMs ?? 0) < CALL_TIMEOUT_MS + SLACK_MS,
          `${a.tool} took ${a.latencyMs} ms`,
        );
      assert.deepEqual(actuals[0].response?.text, ['{"tag":"in-time","sleptMs":200}']);
    }
  });

  it('a policy host that runs out of memory mid-episode: the episode and the run end with POLICY_HOST_OUT_OF_MEMORY; no further episode starts; the trace reads', async () => {
    const policy = await OnnxPolicy.start({
      modelDir: 'unused',
      hostScript: path.join(FIXTURES, 'policy', 'oom-host.mjs'),
      maxHeapMb: 48,
    });
    try {
      const retail = await loadTaskFile(
        path.join(REPO, 'examples', 'tasks', 'retail-0000.task.json'),
      );
      const { summary, trace } = await run(policy, [retail, retail]);
      assert.equal(summary.status, 'failed');
      assert.equal(summary.error?.code, 'POLICY_HOST_OUT_OF_MEMORY');
      assert.match(summary.error!.message, /ran out of memory .*heap out of memory/s);
      assert.deepEqual(
        summary.episodes.map((e) => e.status),
        ['failed'],
      );
      assert.deepEqual(
        trace.events.map((e) => e.type),
        ['run', 'episode', 'episode.end', 'run.end'],
      );
      assert.deepEqual(
        [trace.ends[0].error?.code, trace.end.error?.code],
        ['POLICY_HOST_OUT_OF_MEMORY', 'POLICY_HOST_OUT_OF_MEMORY'],
      );
    } finally {
      policy.dispose();
    }
  });
});
