// A slot's open environments are bounded: tasks whose servers take their own arguments (BFCL, τ²)
// never share one, and a run of 114 τ² tasks kept 114 servers alive before the bound.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ENVIRONMENTS_PER_SLOT, EnvironmentPool } from '../../src/core/env/environmentPool';
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

/** A closable that records when it was opened and closed. */
function tracked(log: string[], name: string) {
  log.push(`open ${name}`);
  return { name, close: () => (log.push(`close ${name}`), Promise.resolve()) };
}

describe('environment pool: a slot keeps at most a few environments open', () => {
  const tmp = useTempDir();

  it('reuses one by its key, closes the least recently used when a new one would exceed the bound', async () => {
    const log: string[] = [];
    const pool = new EnvironmentPool<ReturnType<typeof tracked>>(2);
    const get = (key: string) => pool.get(key, () => Promise.resolve(tracked(log, key)));
    await get('a');
    await get('b');
    assert.equal((await get('a')).name, 'a', 'reused, and now the most recently used');
    await get('c');
    assert.deepEqual(log, ['open a', 'open b', 'close b', 'open c']);
    assert.deepEqual(
      pool.values().map((e) => e.name),
      ['a', 'c'],
    );
    await pool.closeAll();
    assert.deepEqual(log.slice(-2), ['close a', 'close c']);
    assert.deepEqual(pool.values(), []);
    assert.throws(() => new EnvironmentPool(0), /at least one/);
  });

  it(`a run of tasks on servers of their own never has more than ${ENVIRONMENTS_PER_SLOT} open at once, and closes all`, async () => {
    let open = 0;
    let most = 0;
    let opened = 0;
    const tasks: LoadedTask[] = Array.from({ length: 7 }, (_, i) => ({
      file: path.join(tmp(), `t${i}.task.json`),
      baseDir: tmp(),
      task: {
        version: 1,
        id: `t${i}`,
        turns: [{ user: 'Hello.' }],
        servers: { own: { type: 'stdio', command: 'server', args: ['--task', String(i)] } },
        checks: [{ kind: 'answer', contains: ['Hi'] }],
      },
    }));
    const run = await runTasks({
      runsDir: path.join(tmp(), 'runs'),
      tasks,
      settings: { episodesPerTask: 2 },
      policy: new ScriptedPolicy({
        act: () => actResult('Hi.'),
        rehearse: () => rehearseResult(resultText({})),
      }),
      openEnvironment: () => {
        opened++;
        most = Math.max(most, ++open);
        const env = new ScriptedEnvironment({ tools: [], respond: () => ({ ok: true }) as never });
        env.close = () => (open--, Promise.resolve());
        return Promise.resolve(env);
      },
    });
    assert.equal(run.status, 'completed', run.error?.message);
    assert.equal(run.episodes.length, 14);
    assert.equal(opened, 7, "each task's two episodes share its environment");
    assert.equal(most, ENVIRONMENTS_PER_SLOT);
    assert.equal(open, 0);
  });
});
