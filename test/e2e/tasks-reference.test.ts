import * as assert from 'node:assert/strict';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import type { TaskGenerator } from '../../src/core/tasks/generator';
import { generateTasks } from '../../src/core/tasks/generator';
import { playReference, referenceScript } from '../../src/core/tasks/referencePlayer';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';
import { parseActOutput } from '../../src/core/protocol/actParser';
import { BANK_GENERATOR } from '../../src/servers/bank/generator';
import { RETAIL_GENERATOR } from '../../src/servers/retail/generator';
import { REPO, TASKS_PER_DOMAIN, ensureServerBundles } from '../support/servers';

/** A wrong solution: the last call of the last turn left out, and an unhelpful answer. */
function sabotaged(task: TaskFile): TaskFile {
  const turns = task.reference!.turns.map((t) => ({ calls: t.calls.slice(), answer: t.answer }));
  const last = turns[turns.length - 1];
  last.calls.pop();
  last.answer = 'Sorry, I could not help with that.';
  return { ...task, reference: { turns } };
}

interface DomainRun {
  played: number;
  failures: string[];
  sabotagedPassing: string[];
  /** Templates of the sabotaged tasks. */
  sabotaged: Set<string>;
}

async function playDomain(generator: TaskGenerator, builtinServersDir: string): Promise<DomainRun> {
  const tasks = generateTasks(generator, { count: TASKS_PER_DOMAIN });
  // One server process per domain for all its tasks: each episode starts with rehearsal__reset(seed).
  const env = await openEnvironment(
    tasks[0].servers,
    { baseDir: REPO, allowTools: tasks[0].tools },
    { builtinServersDir },
  );
  const run: DomainRun = { played: 0, failures: [], sabotagedPassing: [], sabotaged: new Set() };
  try {
    for (const [i, task] of tasks.entries()) {
      const play = await playReference(task, env);
      run.played++;
      if (play.grade.success !== true || play.grade.reward !== 1) {
        run.failures.push(
          `${task.id}: ${JSON.stringify(play.grade.checks.filter((c) => c.passed !== true))}`,
        );
      }
      if (i % 10 === 0) {
        run.sabotaged.add(task.tags![0]);
        const bad = await playReference({ ...sabotaged(task), checks: task.checks }, env);
        if (bad.grade.success !== false) run.sabotagedPassing.push(task.id);
      }
    }
  } finally {
    await env.close();
  }
  return run;
}

describe('tasks: every generated task passes its own checks when its reference solution runs for real', function () {
  this.timeout(600_000);
  let runs: Map<string, DomainRun>;

  before(async () => {
    const dir = ensureServerBundles();
    // The two domains play side by side: each is mostly waiting on its own server process.
    const [retail, bank] = await Promise.all([
      playDomain(RETAIL_GENERATOR, dir),
      playDomain(BANK_GENERATOR, dir),
    ]);
    runs = new Map([
      ['retail', retail],
      ['bank', bank],
    ]);
  });

  for (const domain of ['retail', 'bank']) {
    it(`${domain}: all ${TASKS_PER_DOMAIN} reference solutions pass every check (reward 1)`, () => {
      const run = runs.get(domain)!;
      assert.equal(run.played, TASKS_PER_DOMAIN);
      assert.deepEqual(run.failures.slice(0, 5), []);
    });

    it(`${domain}: a sabotaged solution (last call dropped, unhelpful answer) fails its checks, for every 10th task`, () => {
      const run = runs.get(domain)!;
      assert.ok(run.sabotaged.size >= 10, `sabotage covered only ${[...run.sabotaged].join(', ')}`);
      assert.deepEqual(run.sabotagedPassing, []);
    });
  }

  it('gives the runner the reference as raw policy texts the act parser reads back', () => {
    const task = RETAIL_GENERATOR.generate(4);
    const script = referenceScript(task);
    assert.equal(script.length, task.turns.length);
    script.forEach((turn, i) => {
      assert.equal(turn.user, task.turns[i].user);
      const acts = turn.acts.map((t) => parseActOutput(t));
      const calls = acts.slice(0, -1).map((a) => (a.kind === 'calls' ? a.calls[0] : undefined));
      assert.deepEqual(calls, task.reference!.turns[i].calls);
      assert.deepEqual(acts[acts.length - 1], {
        kind: 'final',
        text: task.reference!.turns[i].answer,
      });
    });
  });
});
