// A run's environments are shared by its episodes in flight, one held by each, and the servers of a
// coming change of tasks start ahead, while the episodes in flight wait on their policy.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ENVIRONMENTS_PER_SLOT, SharedEnvironments } from '../../src/core/env/sharedEnvironments';
import { runTasks } from '../../src/core/runner/runner';
import type { LoadedTask } from '../../src/core/tasks/format/taskFile';
import {
  ScriptedEnvironment,
  ScriptedPolicy,
  actResult,
  rehearseResult,
  resultText,
} from '../builders/scriptedPolicy';
import { useTempDir } from '../support/tempDir';

/** A closable that records when it was opened, started and closed. */
function tracked(log: string[], name: string) {
  log.push(`open ${name}`);
  return { name, close: () => (log.push(`close ${name}`), Promise.resolve()) };
}
type Tracked = ReturnType<typeof tracked>;

describe('shared environments: one held by each episode in flight', () => {
  const tmp = useTempDir();

  it('episodes in flight each hold their own; one given back is taken again by the next with the same servers', async () => {
    const log: string[] = [];
    const envs = new SharedEnvironments<Tracked>(2);
    let n = 0;
    const open = (key: string) => () => Promise.resolve(tracked(log, `${key}${++n}`));
    const [a, b] = await Promise.all([envs.acquire('a', open('a')), envs.acquire('a', open('a'))]);
    assert.notEqual(a, b, 'two episodes in flight never share one');
    envs.release(a);
    assert.equal(await envs.acquire('a', open('a')), a, 'the one given back is taken again');
    assert.equal(envs.count('a'), 2);
    await envs.closeAll();
    assert.deepEqual(log.slice(0, 2), ['open a1', 'open a2'], 'no third one opened');
    assert.deepEqual(log.slice(2).sort(), ['close a1', 'close a2']);
    assert.throws(() => new SharedEnvironments(0), /at least one/);
  });

  it('prefetch opens and starts one ahead; the episode takes it without opening another; a failed prefetch is opened again by the episode', async () => {
    const log: string[] = [];
    const envs = new SharedEnvironments<Tracked>(1);
    const start = (e: Tracked) => (log.push(`start ${e.name}`), Promise.resolve());
    envs.prefetch('b', () => Promise.resolve(tracked(log, 'b-ahead')), start);
    assert.equal(envs.count('b'), 1);
    const got = await envs.acquire('b', () => Promise.resolve(tracked(log, 'b-late')));
    assert.equal(got.name, 'b-ahead');
    assert.deepEqual(log, ['open b-ahead', 'start b-ahead']);

    envs.prefetch('c', () => Promise.reject(new Error('no such server')), start);
    await assert.rejects(
      envs.acquire('c', () => Promise.reject(new Error('no such server (the episode)'))),
      /the episode/,
    );
    assert.equal(envs.count('c'), 0, 'nothing of the failed one is kept');
    await envs.closeAll();
  });

  it(`holds at most ${ENVIRONMENTS_PER_SLOT} per episode in flight: the least recently used free one is closed first, a held one never`, async () => {
    const log: string[] = [];
    const envs = new SharedEnvironments<Tracked>(1);
    const get = (key: string) => envs.acquire(key, () => Promise.resolve(tracked(log, key)));
    const held = await get('k0');
    for (let i = 1; i < ENVIRONMENTS_PER_SLOT; i++) envs.release(await get(`k${i}`));
    envs.prefetch(
      'next',
      () => Promise.resolve(tracked(log, 'next')),
      () => Promise.resolve(),
    );
    assert.equal((await get('next')).name, 'next');
    assert.deepEqual(log, ['open k0', 'open k1', 'open k2', 'open k3', 'close k1', 'open next']);
    envs.release(held);
    await envs.closeAll();
    assert.deepEqual(log.slice(6).sort(), ['close k0', 'close k2', 'close k3', 'close next']);
  });

  it('a run starts the next task’s servers while the episode before it plays, and plays the same', async () => {
    const log: string[] = [];
    const tasks: LoadedTask[] = ['retail', 'bank'].map((domain) => ({
      file: path.join(tmp(), `${domain}.task.json`),
      baseDir: tmp(),
      task: {
        version: 1,
        id: domain,
        turns: [{ user: 'Hello.' }],
        servers: { [domain]: { builtin: domain } },
        checks: [{ kind: 'answer', contains: ['Hi'] }],
      },
    }));
    const run = await runTasks({
      runsDir: path.join(tmp(), 'runs'),
      tasks,
      policy: new ScriptedPolicy({
        act: () => (log.push('act'), actResult('Hi.')),
        rehearse: () => rehearseResult(resultText({})),
      }),
      openEnvironment: (loaded) => {
        const name = loaded.task.id;
        log.push(`open ${name}`);
        return Promise.resolve(
          new ScriptedEnvironment({
            tools: [],
            respond: () => ({ ok: true }) as never,
            onStart: () => log.push(`start ${name}`),
          }),
        );
      },
    });
    assert.equal(run.status, 'completed', run.error?.message);
    assert.deepEqual(
      run.episodes.map((e) => [e.taskId, e.success]),
      [
        ['retail', true],
        ['bank', true],
      ],
    );
    // bank's servers started ahead, before retail's episode acted, and once more (its reset) for its own.
    assert.deepEqual(log, [
      'open retail',
      'open bank',
      'start bank',
      'start retail',
      'act',
      'start bank',
      'act',
    ]);
  });
});
