import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MeasureContext } from '../../src/recipes/measureEnvace/arms';
import {
  grpoRunFile,
  heldoutSourceText,
  heldoutTaskFiles,
  tasksKey,
  userRunArgs,
} from '../../src/recipes/measureEnvace/arms';
import type { Effects } from '../../src/recipes/measureEnvace/effectsFile';
import { compareImaginedReal } from '../../src/recipes/measureEnvace/fidelity';
import { effectsProblems } from '../../src/recipes/measureEnvace/results';
import type { RolloutEpisode } from '../../src/recipes/shared/rolloutTraces';
import {
  endedOnUnparsableRehearsal,
  trajectoryGrade,
} from '../../src/recipes/shared/rolloutTraces';
import { measureSettings } from '../../src/recipes/measureEnvace/settings';
import { ranks, spearman } from '../../src/recipes/measureEnvace/stats';
import type { ProgressLog } from '../../src/recipes/shared/log';
import type { Recipe } from '../../src/recipes/trainDefault/settings';
import { repoRoot } from '../support/paths';

// measure:envace's comparison at equal act updates: the arms' dose, the fidelity of imagination
// (imagined against real rollouts under one grader) and the effects file's form. No process is
// started here.

const silent: ProgressLog = Object.assign(() => undefined, { started: Date.now() });

describe('recipes: measure:envace arms at equal act updates', () => {
  const recipe = JSON.parse(
    readFileSync(path.join(repoRoot(), 'training/default/recipe.json'), 'utf8'),
  ) as Recipe;
  const ctx = (env: Record<string, string>): MeasureContext => ({
    settings: measureSettings(env, [], '/studio', () => false),
    recipe,
    log: silent,
  });

  it('gives both arms mini-batches of episodes, each role its token-mean, new tasks each iteration', () => {
    const c = ctx({});
    const files = (['imagined', 'real'] as const).map((arm) => grpoRunFile(c, arm, 1, `/o/${arm}`));
    for (const f of files) {
      const h = f.hyperparameters as {
        grpo: Record<string, unknown>;
        optim: Record<string, unknown>;
        rollouts: { command: string[] };
      };
      assert.deepEqual(
        [h.grpo.mini_batch_unit, h.grpo.loss_agg, h.grpo.mini_batch_size, h.grpo.ppo_epochs],
        ['episode', 'role-token-mean', 16, 2],
      );
      assert.equal(h.grpo.iterations, 13);
      assert.deepEqual(h.optim, { lr: 0.0002, schedule: 'constant' });
      const command = h.rollouts.command;
      assert.deepEqual(
        command.slice(command.indexOf('--act-rows'), command.indexOf('--act-rows') + 2),
        ['--act-rows', 'episode'],
      );
      assert.deepEqual(command.slice(-4), ['--batch-size', '16', '--batch', '{iteration}']);
    }
    // The arms differ only in where their rollouts' tool responses come from.
    const [imagined, real] = files.map((f) =>
      JSON.stringify(f).replace(/\/o\/(imagined|real)/g, ''),
    );
    assert.equal(real.replace(',"--real"', ''), imagined.replace(/grpo-imagined/g, 'grpo-real'));
  });

  it('reaches at least 200 optimizer steps an arm at full size, and QUICK exercises the same path', () => {
    const s = ctx({}).settings;
    const episodes = s.grpoTasks * 2 * (s.episodes ?? recipe.grpo.episodes);
    const steps = Math.ceil(episodes / s.miniBatchEpisodes) * s.ppoEpochs * s.iterations;
    assert.ok(steps >= 200, `${steps} steps`);
    assert.deepEqual([s.heldout * 2, s.seeds], [600, [0, 1, 2]]);
    assert.deepEqual([s.fidelityTasks * 2, s.fidelityEpisodes], [100, 4]);
    const quick = ctx({ QUICK: '1' }).settings;
    assert.ok(quick.grpoTasks * 2 * (quick.episodes ?? 0) > quick.miniBatchEpisodes, 'two steps');
    assert.ok(quick.fidelityTasks >= 1);
  });

  it('skips private rehearsal when BUDGETS is empty', () => {
    assert.deepEqual(ctx({ BUDGETS: '' }).settings.budgets, []);
    assert.deepEqual(ctx({}).settings.budgets, [2, 4]);
  });
});

describe('recipes: measure:envace on a folder of held-out tasks (HELDOUT_TASKS, e.g. τ²)', () => {
  const settings = (env: Record<string, string>, argv: string[] = []) =>
    measureSettings(env, argv, '/studio', () => false);

  it('takes every task of HELDOUT_TASKS, or the first HELDOUT (QUICK: one), and refuses a count that is not one', () => {
    assert.equal(settings({}).heldoutTasks, undefined);
    assert.deepEqual(settings({ HELDOUT_TASKS: '/t/tau2' }).heldoutTasks, { dir: '/t/tau2' });
    assert.deepEqual(settings({ HELDOUT_TASKS: '/t/tau2', HELDOUT: '20' }).heldoutTasks, {
      dir: '/t/tau2',
      first: 20,
    });
    assert.deepEqual(settings({ HELDOUT_TASKS: '/t/tau2', QUICK: '1' }).heldoutTasks, {
      dir: '/t/tau2',
      first: 1,
    });
    assert.throws(
      () => settings({ HELDOUT_TASKS: '/t', HELDOUT: '0' }),
      /HELDOUT must be a whole number above 0/,
    );
    assert.throws(
      () => settings({ HELDOUT_TASKS: '/t' }, ['--publish']),
      /does not go with --publish/,
    );
    assert.notEqual(tasksKey(settings({ HELDOUT_TASKS: '/t' })), tasksKey(settings({})));
    assert.match(
      heldoutSourceText(settings({ HELDOUT_TASKS: '/t/tau2', HELDOUT: '20' })),
      /^the first 20 task file\(s\) of \/t\/tau2 \(HELDOUT_TASKS\)$/,
    );
    assert.match(
      heldoutSourceText(settings({})),
      /^generated, test-split seeds from 30000, 300 per domain/,
    );
  });

  it('hands every evaluation the user endpoint USER_ENDPOINT and USER_MODEL name, and refuses half of it', () => {
    assert.deepEqual(userRunArgs(settings({})), []);
    const s = settings({
      USER_ENDPOINT: 'http://127.0.0.1:8001/v1',
      USER_MODEL: 'user',
      USER_API_KEY_ENV: 'K',
    });
    assert.deepEqual(userRunArgs(s), [
      ...['--user-endpoint', 'http://127.0.0.1:8001/v1', '--user-model', 'user'],
      ...['--user-api-key-env', 'K'],
    ]);
    assert.match(heldoutSourceText(s), /; users played by user at http:\/\/127\.0\.0\.1:8001\/v1$/);
    assert.throws(
      () => settings({ USER_ENDPOINT: 'http://127.0.0.1:8001/v1' }),
      /needs USER_MODEL/,
    );
    assert.throws(() => settings({ USER_MODEL: 'user' }), /go with USER_ENDPOINT/);
  });

  it("plays the folder's task files by name, and what they hold changes with their content", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'heldout-tasks-'));
    try {
      await assert.rejects(heldoutTaskFiles({ dir }), /holds no \*\.task\.json file/);
      for (const n of ['b', 'a', 'c'])
        writeFileSync(path.join(dir, `${n}.task.json`), `{"id":"${n}"}`);
      writeFileSync(path.join(dir, 'notes.txt'), 'not a task');
      const all = await heldoutTaskFiles({ dir });
      assert.deepEqual(
        all.files,
        ['a', 'b', 'c'].map((n) => path.join(dir, `${n}.task.json`)),
      );
      const two = await heldoutTaskFiles({ dir, first: 2 });
      assert.deepEqual(
        two.files,
        ['a', 'b'].map((n) => path.join(dir, `${n}.task.json`)),
      );
      assert.notDeepEqual(two.holds, all.holds);
      writeFileSync(path.join(dir, 'c.task.json'), '{"id":"c","changed":true}');
      assert.notDeepEqual((await heldoutTaskFiles({ dir })).holds, all.holds, 'a changed file');
      assert.deepEqual(
        (await heldoutTaskFiles({ dir, first: 2 })).holds,
        two.holds,
        'the first two did not change',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('recipes: measure:envace fidelity of imagination', () => {
  const state = { id: 'state-0', kind: 'state' as const, weight: 1 };
  const call = { id: 'call-0', kind: 'call' as const, weight: 1 };
  const episode = (task: string, e: Partial<RolloutEpisode>): RolloutEpisode => ({
    task,
    status: 'completed',
    success: null,
    ...e,
  });

  it('grades real episodes by their trajectory items, as imagined ones are graded', () => {
    // Right calls, wrong final state: a success by trajectory items, a failure on the real state.
    const real = episode('t', {
      checks: [
        { ...state, passed: false },
        { ...call, passed: true },
      ],
      success: false,
    });
    assert.deepEqual(trajectoryGrade(real), { reward: 1, success: true });
    const broken = episode('t', { status: 'failed', code: 'SIMULATOR_JSON_DECODE_ERROR' });
    assert.deepEqual(trajectoryGrade(broken), { reward: 0, success: false });
    assert.ok(endedOnUnparsableRehearsal(broken));
    assert.ok(
      !endedOnUnparsableRehearsal(episode('t', { status: 'failed', code: 'JSON_DECODE_ERROR' })),
    );
    assert.equal(trajectoryGrade(episode('t', { status: 'cancelled' })), null);
    assert.equal(trajectoryGrade(episode('t', { checks: [{ ...state, passed: true }] })), null);
  });

  it('compares per-task rewards imagined and real, with their rank correlation', () => {
    const graded = (task: string, passed: boolean) =>
      episode(task, {
        checks: [
          { ...call, passed },
          { ...call, id: 'c1', passed: true },
        ],
      });
    const imagined = [
      graded('a', true),
      graded('a', true),
      graded('b', false),
      episode('b', { status: 'failed', code: 'NO_EXECUTION_RESULT_TAG_FOUND' }),
      graded('c', false),
      graded('c', true),
    ];
    const real = [
      graded('a', true),
      graded('a', false),
      graded('b', false),
      graded('b', false),
      graded('c', true),
      graded('c', true),
      graded('d', true),
    ];
    const f = compareImaginedReal(imagined, real, 2);
    assert.equal(f.tasks, 3, 'task d was played real only');
    assert.deepEqual(
      f.perTask.map((t) => [t.task, t.imagined.reward, t.real.reward]),
      [
        ['a', 1, 0.75],
        ['b', 0.25, 0.5],
        ['c', 0.75, 1],
      ],
    );
    assert.equal(f.imaginedSuccess, 3 / 6);
    assert.equal(f.realSuccess, 4 / 7);
    assert.equal(f.imaginedParseFailRate, 1 / 6);
    assert.equal(f.imaginedRealRankCorr, spearman([1, 0.25, 0.75], [0.75, 0.5, 1]));
  });

  it("Spearman's correlation ranks ties at their mean and is undefined without a ranking", () => {
    assert.deepEqual(ranks([0.2, 0.2, 0.5, 0.9, 0.1]), [2.5, 2.5, 4, 5, 1]);
    assert.equal(spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]), 0.8);
    assert.equal(spearman([1, 2, 3], [3, 2, 1]), -1);
    // Values computed with numpy's corrcoef of the same mean ranks.
    assert.ok(Math.abs(spearman([1, 2, 2, 3], [1, 2, 3, 4])! - 0.9486832980505139) < 1e-12);
    const s = spearman([0.2, 0.2, 0.5, 0.9, 0.1], [0.3, 0.6, 0.4, 0.8, 0.3])!;
    assert.ok(Math.abs(s - 0.7631578947368421) < 1e-12);
    assert.equal(spearman([1], [2]), null);
    assert.equal(spearman([1, 1, 1], [1, 2, 3]), null);
    assert.throws(() => spearman([1, 2], [1]));
  });
});

describe('recipes: measure:envace effects file', () => {
  const difference = (name: string, metric: 'success' | 'reward') => ({
    name,
    metric,
    mean: 0.01,
    ci95: [-0.02, 0.04] as [number, number],
    tasks: 600,
  });
  const arm = { actUpdates: 624, actTokens: 90000, steps: 624, episodes: 4992 };
  const effects = (): Effects => ({
    seeds: [0, 1, 2],
    privateRehearsalSeeds: [],
    heldOutTasks: 600,
    grpo: {
      iterations: 13,
      tasks: 16,
      newTasksEachIteration: true,
      episodes: 8,
      miniBatchEpisodes: 16,
      miniBatchUnit: 'episode',
      lossAgg: 'role-token-mean',
      ppoEpochs: 2,
      lr: 0.0002,
    },
    compute: {
      imagined: { ...arm, realToolCalls: 0, imaginedParseFailRate: 0.3 },
      real: { ...arm, realToolCalls: 15000, imaginedParseFailRate: 0 },
    },
    imaginedSuccess: 0.02,
    realSuccess: 0.21,
    imaginedRealRankCorr: 0.4,
    fidelity: {
      tasks: 100,
      episodesPerTask: 4,
      imaginedReward: 0.3,
      realReward: 0.5,
      realSuccessOnState: 0.2,
      imaginedParseFailRate: 0.3,
    },
    differences: ['imagined-vs-none', 'real-vs-none', 'imagined-vs-real'].flatMap((n) => [
      difference(n, 'success'),
      difference(n, 'reward'),
    ]),
  });

  it('accepts a well-formed effects file and names each field out of form', () => {
    assert.deepEqual(effectsProblems(effects()), []);
    const e = effects();
    e.compute.real.actUpdates = 0;
    e.compute.imagined.imaginedParseFailRate = 1.5;
    e.imaginedRealRankCorr = Number.NaN;
    e.realSuccess = -0.1;
    e.differences = e.differences.filter((d) => d.name !== 'real-vs-none');
    assert.deepEqual(effectsProblems(e), [
      'compute.imagined.imaginedParseFailRate',
      'compute.real.actUpdates',
      'realSuccess',
      'imaginedRealRankCorr',
      'differences real-vs-none success',
      'differences real-vs-none reward',
    ]);
    assert.deepEqual(effectsProblems({ ...effects(), imaginedRealRankCorr: null }), []);
  });
});
