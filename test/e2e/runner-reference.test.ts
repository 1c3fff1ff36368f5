// The runner with the reference policy (each task's reference solution) on the built-in example
// tasks, against their real servers: the demonstrations the default policy is trained on.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { StudioError } from '../../src/core/base/errors';
import { ReferencePolicy } from '../../src/core/policy/referencePolicy';
import { replayTrace } from '../../src/core/runner/replay';
import { runTasks } from '../../src/core/runner/runner';
import { loadTasks } from '../../src/core/tasks/format/loader';
import { loadIndexSnapshot } from '../../src/core/trace/index/traceIndex';
import { openTaskEnvironment } from '../../src/core/tasks/taskEnvironment';
import type { LoadedTask } from '../../src/core/tasks/format/taskFile';
import { ensureServerBundles, REPO } from '../support/servers';
import { useRuns } from '../support/runnerFixture';

describe('runner: the reference policy on the built-in example tasks', function () {
  this.timeout(120_000);
  const { run, runsDir } = useRuns();
  let tasks: LoadedTask[] = [];
  before(async () => {
    ensureServerBundles();
    tasks = await loadTasks([path.join(REPO, 'examples', 'tasks')]);
  });

  it('shadow: every example task succeeds; each call is recorded with its actual response and no rehearsal', async () => {
    assert.ok(tasks.length >= 8, `${tasks.length} example tasks`);
    const { summary, trace } = await run(new ReferencePolicy(tasks.map((t) => t.task)), tasks);
    assert.equal(summary.status, 'completed');
    assert.deepEqual(trace.run.policy, { kind: 'reference', id: 'reference' });
    assert.deepEqual(
      summary.episodes.map((e) => [e.taskId, e.status, e.success]),
      tasks.map((t) => [t.task.id, 'completed', true]),
    );
    assert.deepEqual([trace.rehearsals.length, trace.fidelities.length], [0, 0]);
    const calls = trace.turns.flatMap((t) => (t.parse.kind === 'calls' ? t.parse.calls : []));
    assert.equal(trace.actuals.length, calls.length);
    const scripted = tasks.reduce(
      (n, t) => n + t.task.reference!.turns.reduce((m, turn) => m + turn.calls.length, 0),
      0,
    );
    assert.equal(calls.length, scripted, 'every reference call was made');
    assert.ok(
      trace.actuals.every((a) => a.source === 'mcp' && a.response && !a.error),
      'every call answered',
    );
    // Multi-turn tasks record the user message before the first act of each user turn.
    for (const t of tasks) {
      const episode = trace.episodes.find((e) => e.taskId === t.task.id)!;
      const users = trace
        .of(episode.episodeId)
        .flatMap((e) => (e.type === 'turn' && e.user !== undefined ? [e.user] : []));
      assert.deepEqual(
        users,
        t.task.turns.map((u) => u.user),
        t.task.id,
      );
    }
  });

  it("saves the explorer's index beside a trace long enough to be worth it when the run ends, inside .rehearsal only", async () => {
    const retail = tasks.filter((t) => t.task.domain === 'retail').slice(0, 1);
    const policy = new ReferencePolicy(retail.map((t) => t.task));
    const play = (dir: string, saveIndexAfterBytes?: number) =>
      runTasks({
        runsDir: dir,
        tasks: retail,
        policy,
        openEnvironment: (t) => openTaskEnvironment(t),
        saveIndexAfterBytes,
      });
    const savedBeside = (traceFile: string) =>
      existsSync(path.join(path.dirname(traceFile), 'trace.index'));
    const inWorkspace = path.join(runsDir(), 'workspace', '.rehearsal', 'runs');
    const big = await play(inWorkspace, 1);
    assert.ok(savedBeside(big.traceFile));
    assert.equal(
      (await loadIndexSnapshot(big.traceFile))?.index.restoredBytes,
      (await fs.stat(big.traceFile)).size,
      'it describes the whole trace',
    );
    assert.equal(
      savedBeside((await play(inWorkspace)).traceFile),
      false,
      'a small trace under the default 16 MiB is not worth it',
    );
    assert.equal(
      savedBeside((await play(path.join(runsDir(), 'elsewhere'), 1)).traceFile),
      false,
      'nothing is written beside a trace outside .rehearsal',
    );
  });

  it("several episodes per task reuse one environment, reset to the task's seed each time", async () => {
    const retail = tasks.filter((t) => t.task.domain === 'retail').slice(0, 2);
    const { trace } = await run(new ReferencePolicy(retail.map((t) => t.task)), retail, {
      episodesPerTask: 2,
    });
    assert.deepEqual(
      trace.episodes.map((e) => e.taskId),
      [retail[0].task.id, retail[0].task.id, retail[1].task.id, retail[1].task.id],
    );
    assert.deepEqual(
      trace.ends.map((e) => e.reward),
      [1, 1, 1, 1],
      'the second attempt found the state the first one started from',
    );
    const actualTexts = (episodeId: string) =>
      trace
        .of(episodeId)
        .flatMap((e) => (e.type === 'call.actual' ? [JSON.stringify(e.response)] : []));
    assert.deepEqual(actualTexts('e2'), actualTexts('e1'));
  });

  it('imagine, private rehearsal and replay need a policy that rehearses: a usage error before anything is written', async () => {
    const policy = new ReferencePolicy(tasks.map((t) => t.task));
    const runsBefore = await fs.readdir(runsDir());
    for (const mode of ['imagine', 'private'] as const) {
      await assert.rejects(
        runTasks({
          runsDir: runsDir(),
          tasks: tasks.slice(0, 1),
          policy,
          openEnvironment: (t) => openTaskEnvironment(t),
          settings: { mode },
        }),
        (err: StudioError) =>
          err.code === 'USAGE' && err.message.includes(`cannot play ${mode} episodes`),
      );
    }
    assert.deepEqual(await fs.readdir(runsDir()), runsBefore, 'no trace was started');
    const recorded = await run(policy, tasks.slice(0, 1));
    await assert.rejects(
      replayTrace({ source: recorded.summary.traceFile, runsDir: runsDir(), policy }),
      (err: StudioError) => err.code === 'USAGE' && /does not rehearse/.test(err.message),
    );
  });
});
