// Each sampled episode draws its own random numbers: the episodes of one task (a GRPO group), of tasks
// with the same prompt, of consecutive GRPO iterations (whose rollouts use seeds s and s + 1), and a
// task's acts and rehearsals all sample from streams of their own. Also the batches of tasks GRPO's
// rollouts take an iteration at a time.
import * as assert from 'node:assert/strict';
import { mixSeed, mulberry32 } from '../../src/core/base/random';
import { withEpisodeSeed } from '../../src/core/runner/runner';
import { withDefaults } from '../../src/core/runner/settings';
import { taskBatch } from '../../src/cli/commands/rollout';

const sampled = (seed: number) =>
  withDefaults({
    episodesPerTask: 8,
    sampling: {
      act: { temperature: 1, seed },
      rehearse: { temperature: 1, seed: mixSeed(seed, 'rehearse') },
    },
  });

/** The first draws of a seed's stream, to compare streams rather than seed numbers. */
const draws = (seed: number) => {
  const next = mulberry32(seed);
  return Array.from({ length: 4 }, next).join(',');
};

describe('episode seeds', () => {
  it('keeps the run seed for the first episode and gives every other stream its own', () => {
    const streams = new Map<string, string>();
    const add = (label: string, seed: number) => {
      const d = draws(seed);
      assert.ok(!streams.has(d), `${label} replays ${streams.get(d)}`);
      streams.set(d, label);
    };
    for (const iteration of [0, 1, 2])
      for (const task of ['bank-choice-0000', 'bank-choice-0001'])
        for (let k = 0; k < 8; k++) {
          if (k === 0 && task !== 'bank-choice-0000') continue; // episode 0 of every task keeps the run seed
          const s = withEpisodeSeed(sampled(iteration), task, k).sampling;
          add(`iteration ${iteration} ${task} episode ${k} act`, s.act.seed!);
          add(`iteration ${iteration} ${task} episode ${k} rehearse`, s.rehearse.seed!);
        }
    assert.equal(withEpisodeSeed(sampled(5), 'any', 0).sampling.act.seed, 5);
  });

  it('derives the same seeds on every run', () => {
    assert.equal(mixSeed(7, 'act', 'task', 3), mixSeed(7, 'act', 'task', 3));
    assert.notEqual(mixSeed(7, 'act', 'task', 3), mixSeed(7, 'act', 'task', 4));
    assert.ok(Number.isInteger(mixSeed(2 ** 32 - 1, 'x')) && mixSeed(2 ** 32 - 1, 'x') >= 0);
  });
});

describe('rollout batches (rehearse rollout --batch-size --batch)', () => {
  const tasks = Array.from({ length: 10 }, (_, i) => ({
    task: { id: `${i % 2 ? 'retail' : 'bank'}-${String(i).padStart(4, '0')}` },
  }));
  it('plays every task once before any again, in batches that mix the tasks', () => {
    const ids = (b: number) => taskBatch(tasks, 4, b).map((t) => t.task.id);
    const firstTen = [...ids(0), ...ids(1), ...ids(2).slice(0, 2)];
    assert.equal(new Set(firstTen).size, 10);
    assert.deepEqual(ids(2).slice(2), ids(0).slice(0, 2), 'batch 2 wraps around');
    assert.deepEqual(ids(1), ids(1), 'the same batch every time');
    assert.ok(
      ids(0).some((id) => id.startsWith('bank')) && ids(0).some((id) => id.startsWith('retail')),
    );
    assert.equal(taskBatch(tasks, 50, 3).length, 10, 'a batch is at most every task');
  });
});
