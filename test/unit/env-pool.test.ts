// A run's open environments are bounded: tasks whose servers take their own arguments (BFCL, τ²)
// never share one, and a run of 114 τ² tasks kept 114 servers alive before the bound. The pool
// itself (sharedEnvironments.ts): env-shared.test.ts.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ENVIRONMENTS_PER_SLOT } from '../../src/core/env/sharedEnvironments';
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

describe('environment pool: a run keeps at most a few environments open', () => {
  const tmp = useTempDir();

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
