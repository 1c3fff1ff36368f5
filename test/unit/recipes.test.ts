import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { curveTable, sanityFailures } from '../../src/recipes/grpoSanity/figures';
import type { CurvePoint } from '../../src/recipes/grpoSanity/figures';
import { grpoRunFile } from '../../src/recipes/measureEnvace/arms';
import { grpoRunFileOf, keepOnlyUnder } from '../../src/recipes/trainDefault/grpoArm';
import { measureSettings } from '../../src/recipes/measureEnvace/settings';
import { difference, interval, summarise } from '../../src/recipes/measureEnvace/stats';
import type { Evaluation } from '../../src/recipes/measureEnvace/stats';
import { RECIPES } from '../../src/recipes/recipes';
import type { ProgressLog } from '../../src/recipes/shared/log';
import {
  Stages,
  StoppedAfter,
  cachedStep,
  decideStage,
  stepKey,
} from '../../src/recipes/shared/stages';
import { describeTrainerEvent } from '../../src/recipes/shared/trainerEvents';
import { trainPaths } from '../../src/recipes/trainDefault/context';
import type { TrainContext } from '../../src/recipes/trainDefault/context';
import { grpoHyperparameters } from '../../src/recipes/trainDefault/grpo';
import type { JsonObject, Recipe } from '../../src/recipes/trainDefault/settings';
import {
  GROUNDED_MAX_EXAMPLES,
  trainDefaultSettings,
} from '../../src/recipes/trainDefault/settings';
import { realGrpoFinal, realGrpoPlan } from '../../src/recipes/trainDefault/realGrpo';
import { startCopyProbe, takeStart, takenStages } from '../../src/recipes/trainDefault/start';
import { validationScores } from '../../src/recipes/validatePolicy';
import { repoRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';

// The recipes' pure parts: settings from the environment, stage and resume decisions, the GRPO
// settings they hand the trainer, and the statistics they publish. No process is started here; the
// recipes themselves run end to end at a tiny size in scripts/test.sh's `recipes` stage.

const ROOT = '/studio';
const silent: ProgressLog = Object.assign(() => undefined, { started: Date.now() });

describe('recipes: train:default settings', () => {
  it('defaults to the committed recipe, its work folder and models/default', () => {
    const s = trainDefaultSettings({}, [], ROOT);
    assert.equal(s.recipeFile, '/studio/training/default/recipe.json');
    assert.equal(s.work, '/studio/.rehearsal/training/default');
    assert.equal(s.model, '/studio/models/default');
    assert.equal(s.fresh, false);
    assert.equal(s.until, undefined);
  });

  it('reads RECIPE, WORK and MODEL relative to the current folder, --fresh and --until', () => {
    const env = { RECIPE: 'training/default/recipe.ci.json', WORK: '/tmp/w', MODEL: 'm' };
    const s = trainDefaultSettings(env, ['--fresh', '--until', 'init'], ROOT);
    assert.equal(s.recipeFile, path.resolve('training/default/recipe.ci.json'));
    assert.equal(s.work, '/tmp/w');
    assert.equal(s.model, path.resolve('m'));
    assert.equal(s.fresh, true);
    assert.equal(s.until, 'init');
  });

  it('refuses an --until that names no stage, instead of running every stage', () => {
    assert.throws(
      () => trainDefaultSettings({}, ['--until', 'sfft'], ROOT),
      /--until takes one of/,
    );
    assert.throws(() => trainDefaultSettings({}, ['--until'], ROOT), /got nothing/);
  });

  it('--from with START: the training stages before it come from a published policy', () => {
    const s = trainDefaultSettings({ START: 'models/default' }, ['--from', 'grpo-real'], ROOT);
    assert.equal(s.from, 'grpo-real');
    assert.equal(s.start, path.resolve('models/default'));
    assert.throws(
      () => trainDefaultSettings({}, ['--from', 'grpo-real'], ROOT),
      /needs START=<policy folder>/,
    );
    assert.throws(() => trainDefaultSettings({ START: 'm' }, [], ROOT), /add --from grpo/);
    // SFT starts from the random initialisation, not from a policy: it cannot be continued so.
    assert.throws(
      () => trainDefaultSettings({ START: 'm' }, ['--from', 'sft'], ROOT),
      /--from takes one of grpo, grpo-real; got sft/,
    );
    assert.throws(
      () => trainDefaultSettings({ START: 'm' }, ['--from', 'grpo-real', '--until', 'sft'], ROOT),
      /--until sft comes before --from grpo-real/,
    );
  });
});

describe('recipes: train:default --from a published policy', () => {
  const tmp = useTempDir();
  const tiny = JSON.parse(
    readFileSync(path.join(repoRoot(), 'training/default/recipe.ci.json'), 'utf8'),
  ) as Recipe;
  const ctxAt = (work: string, start: string, recipe: Recipe = tiny): TrainContext => ({
    settings: { recipeFile: '', work, model: '/m', fresh: false, from: 'grpo-real', start },
    recipe,
    paths: trainPaths(work),
    log: silent,
    stages: new Stages(work, silent),
  });
  /** A published policy folder: its files, and a manifest saying how its stages were made. */
  const publish = (dir: string, config = '{"hidden_size": 8}') => {
    mkdirSync(path.join(dir, 'onnx'), { recursive: true });
    writeFileSync(path.join(dir, 'config.json'), config);
    writeFileSync(path.join(dir, 'tokenizer.json'), '{}');
    writeFileSync(path.join(dir, 'onnx/model.onnx'), 'graph');
    writeFileSync(
      path.join(dir, 'manifest.json'),
      JSON.stringify({
        history: '2026-12-03: SFT resumed after its step-1900 checkpoint.',
        stageMinutes: { tasks: 0.1, sft: 94, 'sft-memory': 9, grpo: 50 },
        copyProbe: { call_exact: 0.75 },
      }),
    );
  };

  it('takes the training stages the recipe has before --from, never the data stages', () => {
    assert.deepEqual(takenStages('grpo-real', tiny), [
      'tokenizer',
      'init',
      'sft',
      'memories',
      'sft-memory',
      'grpo',
    ]);
    const { memory: _m, ...withoutMemory } = tiny;
    assert.deepEqual(takenStages('grpo', withoutMemory), ['tokenizer', 'init', 'sft']);
  });

  it('copies START into WORK, carries its history, minutes and copy probe, and says how', async () => {
    const start = path.join(tmp(), 'published');
    const work = path.join(tmp(), 'work');
    publish(start);
    const ctx = ctxAt(work, start);
    const taken = await takeStart(ctx);
    assert.equal(taken.start, path.join(work, 'start'));
    assert.equal(readFileSync(path.join(taken.start, 'onnx/model.onnx'), 'utf8'), 'graph');
    const history = readFileSync(path.join(work, 'history.txt'), 'utf8').trim().split('\n');
    assert.equal(history[0], '2026-12-03: SFT resumed after its step-1900 checkpoint.');
    assert.match(history[1], /tokenizer through grpo were taken from .*published/);
    assert.match(history[1], /START=.* npm run train:default -- --from grpo-real/);
    // The taken stages' minutes are START's; a data stage this run makes counts its own.
    assert.deepEqual(await ctx.stages.minutes(), { sft: 94, 'sft-memory': 9, grpo: 50 });
    assert.deepEqual(await startCopyProbe(work), { copyProbe: { call_exact: 0.75 } });
    // Resumed with the same START: nothing copied or said again.
    assert.deepEqual(await takeStart(ctx), taken);
    assert.equal(readFileSync(path.join(work, 'history.txt'), 'utf8').trim().split('\n').length, 2);
    // START replaced by another policy: a new copy, under a new key.
    publish(start, '{"hidden_size": 16}');
    const again = await takeStart(ctx);
    assert.notEqual(again.key, taken.key);
    assert.equal(
      readFileSync(path.join(again.start, 'config.json'), 'utf8'),
      '{"hidden_size": 16}',
    );
  });

  it('refuses a START that holds no policy, saying what to name', async () => {
    await assert.rejects(
      takeStart(ctxAt(path.join(tmp(), 'work'), tmp())),
      /holds no policy \(no config.json\): name a policy folder such as models\/default/,
    );
  });

  it("real-rollout GRPO is measure:envace's real arm at the recipe's dose, from START", () => {
    const ctx = ctxAt('/w', '/p');
    const real = tiny.realGrpo!;
    const plan = realGrpoPlan(ctx, real, '/w/start', 'k');
    const run = grpoRunFileOf(tiny, plan, 'real', tiny.seed, path.dirname(realGrpoFinal(ctx)));
    assert.equal(run.base, '/w/start');
    assert.equal(run.out_dir, `/w/grpo-real/real-seed${tiny.seed}`);
    const rollout = run.hyperparameters.rollouts.command;
    assert.deepEqual(rollout.slice(2, 4), ['rollout', '/w/tasks/grpo-real']);
    assert.ok(rollout.includes('--real'));
    const at = rollout.indexOf('--batch-size');
    assert.deepEqual(rollout.slice(at, at + 2), ['--batch-size', String(real.tasksPerIteration)]);
    assert.equal(run.hyperparameters.grpo.iterations, real.iterations);
    assert.equal(run.hyperparameters.grpo.mini_batch_size, real.miniBatchEpisodes);
    assert.equal(run.hyperparameters.optim.lr, real.lr);
    assert.equal(plan.baseKey, 'k');
  });
});

describe('recipes: stages resume', () => {
  const tmp = useTempDir();

  it('decides from the mark and --until', () => {
    assert.deepEqual(decideStage('sft', false), { run: true, stopAfter: false });
    assert.deepEqual(decideStage('sft', true, 'sft'), { run: false, stopAfter: true });
    assert.deepEqual(decideStage('init', true, 'sft'), { run: false, stopAfter: false });
  });

  it('runs a stage once, adds up its minutes, and stops after the --until stage', async () => {
    let runs = 0;
    const work = async () => {
      runs++;
    };
    await new Stages(tmp(), silent).run('tasks', 'tasks', work);
    await new Stages(tmp(), silent).run('tasks', 'tasks', work);
    assert.equal(runs, 1);
    assert.ok(existsSync(path.join(tmp(), 'tasks.done')));
    const stages = new Stages(tmp(), silent, 'init');
    await assert.rejects(stages.run('init', 'init', work), StoppedAfter);
    assert.equal(runs, 2);
    assert.deepEqual(Object.keys(await stages.minutes()).sort(), ['init', 'tasks']);
  });

  it('runs a cached step again when its key changed, and reads it back when not', async () => {
    let runs = 0;
    const step = (key: string) =>
      cachedStep(tmp(), { name: 'eval-none', key }, silent, () =>
        Promise.resolve({ runs: ++runs }),
      );
    assert.equal((await step(stepKey({ heldout: 300 }))).runs, 1);
    assert.equal((await step(stepKey({ heldout: 300 }))).runs, 1);
    assert.equal((await step(stepKey({ heldout: 100 }))).runs, 2);
    assert.equal(
      (await cachedStep(tmp(), 'eval-none', silent, () => Promise.resolve({ runs: 9 }))).runs,
      2,
    );
    assert.equal(stepKey({ a: 1, b: [2] }), stepKey({ b: [2], a: 1, c: undefined }));
  });

  it('moves a training run made under other settings aside instead of deleting it', async () => {
    const out = path.join(tmp(), 'grpo', 'imagined-seed0');
    await keepOnlyUnder(out, 'a', silent);
    mkdirSync(path.join(out, 'final'), { recursive: true });
    writeFileSync(path.join(out, 'final', 'model.onnx'), 'trained under a');
    await keepOnlyUnder(out, 'a', silent);
    assert.ok(existsSync(path.join(out, 'final', 'model.onnx')), 'same key: kept to resume');
    await keepOnlyUnder(out, 'b', silent);
    assert.ok(!existsSync(out), 'other settings: started over');
    assert.equal(readFileSync(`${out}.key`, 'utf8').trim(), 'b');
    assert.equal(
      readFileSync(path.join(`${out}.previous`, 'final', 'model.onnx'), 'utf8'),
      'trained under a',
    );
    assert.equal(readFileSync(`${out}.previous.key`, 'utf8').trim(), 'a');
  });

  it('leaves no mark when a stage fails, so the next run does it again', async () => {
    const stages = new Stages(tmp(), silent);
    await assert.rejects(
      stages.run('sft', 'sft', () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.ok(!existsSync(path.join(tmp(), 'sft.done')));
  });
});

describe('recipes: GRPO settings of train:default', () => {
  // The tiny recipe grounds imagination (CI runs that path); these tests start ungrounded.
  const tiny = JSON.parse(
    readFileSync(path.join(repoRoot(), 'training/default/recipe.ci.json'), 'utf8'),
  ) as Recipe;
  const recipe: Recipe = { ...tiny, grpo: { ...tiny.grpo, groundedImagination: false } };
  const ctx = (r: Recipe): TrainContext => ({
    settings: { recipeFile: '', work: '/w', model: '/m', fresh: false },
    recipe: r,
    paths: trainPaths('/w'),
    log: silent,
    stages: new Stages('/w', silent),
  });

  it('hands the trainer its own settings, rollouts by `rehearse rollout` and validation', () => {
    const h = grpoHyperparameters(ctx(recipe));
    for (const own of ['threads', 'episodes', 'temperature', 'actRows', 'tasksPerIteration'])
      assert.ok(!(own in h), own);
    assert.equal((h.grpo as { temperature: number }).temperature, recipe.grpo.temperature);
    assert.equal((h.train as { export_at_end: boolean }).export_at_end, true);
    const rollout = (h.rollouts as { command: string[] }).command;
    assert.deepEqual(rollout.slice(2, 4), ['rollout', '/w/tasks/grpo']);
    assert.deepEqual(rollout.slice(-4), ['--batch-size', '1', '--batch', '{iteration}']);
    const validation = (h.validation as { command: string[]; every: number }).command;
    assert.ok(validation[1].endsWith(path.join('dist', 'recipes.js')), validation[1]);
    assert.deepEqual(validation.slice(2, 4), ['validate-policy', '/w/tasks/validation']);
  });

  it('grounded imagination: rollouts of the grounded GRPO tasks with their examples shown; validation without', () => {
    const committed = JSON.parse(
      readFileSync(path.join(repoRoot(), 'training/default/recipe.json'), 'utf8'),
    ) as Recipe;
    assert.equal(committed.grpo.groundedImagination, false, 'documented in the committed recipe');
    const plain = grpoHyperparameters(ctx({ ...recipe, grpo: { ...recipe.grpo } }));
    const grounded = grpoHyperparameters(
      ctx({ ...recipe, grpo: { ...recipe.grpo, groundedImagination: true } }),
    );
    const rollout = (h: JsonObject) => (h.rollouts as { command: string[] }).command;
    const validation = (h: JsonObject) => (h.validation as { command: string[] }).command;
    assert.equal(rollout(plain)[3], '/w/tasks/grpo');
    assert.ok(!rollout(plain).includes('--max-examples'));
    assert.equal(rollout(grounded)[3], '/w/tasks/grpo-grounded');
    const at = rollout(grounded).indexOf('--max-examples');
    assert.deepEqual(rollout(grounded).slice(at, at + 2), [
      '--max-examples',
      String(GROUNDED_MAX_EXAMPLES),
    ]);
    // Held-out validation is played as the policy is prompted at test time: no examples.
    assert.deepEqual(validation(grounded), validation(plain));
    assert.equal(validation(grounded)[3], '/w/tasks/validation');
    // The switch is the recipe's, not the trainer's.
    for (const h of [plain, grounded]) assert.ok(!('groundedImagination' in h));
  });

  it('plays every GRPO task each iteration without validation when the recipe says neither', () => {
    const { validation: _v, tasksPerIteration: _t, ...grpo } = recipe.grpo;
    const h = grpoHyperparameters(ctx({ ...recipe, grpo }));
    assert.ok(!('validation' in h));
    assert.ok(!(h.rollouts as { command: string[] }).command.includes('--batch'));
  });
});

describe('recipes: measure:envace settings', () => {
  const none = () => false;

  it('QUICK=1 is the tiny version: one seed, one iteration, POLICY as BASE, no section C', () => {
    const s = measureSettings({ QUICK: '1' }, [], ROOT, () => true);
    assert.deepEqual(s.seeds, [0]);
    assert.equal(s.iterations, 1);
    assert.equal(s.episodes, 2);
    assert.equal(s.base, s.policy);
    assert.equal(s.recipeStart, undefined);
    assert.equal(s.work, '/studio/.rehearsal/measure-envace-quick');
  });

  it("starts from train:default's SFT and compares with its GRPO start when that work is there", () => {
    const s = measureSettings({}, ['--publish'], ROOT, (dir) => dir.includes('/sft'));
    assert.equal(s.base, '/studio/.rehearsal/training/default/sft/final');
    assert.equal(s.recipeStart, '/studio/.rehearsal/training/default/sft-memory/final');
    assert.equal(s.episodes, undefined, "the recipe's own episodes");
    assert.equal(s.publish, true);
    assert.equal(measureSettings({}, [], ROOT, none).base, '/studio/models/default');
  });

  it('GROUNDED=1 or 0 overrides the recipe switch; unset, the recipe decides', () => {
    assert.equal(measureSettings({ GROUNDED: '1' }, [], ROOT, none).grounded, true);
    assert.equal(measureSettings({ GROUNDED: '0' }, [], ROOT, none).grounded, false);
    assert.equal('grounded' in measureSettings({}, [], ROOT, none), false);
  });

  it("grounded imagination: every arm's rollouts play the grounded GRPO tasks with their examples shown", () => {
    const recipe = JSON.parse(
      readFileSync(path.join(repoRoot(), 'training/default/recipe.json'), 'utf8'),
    ) as Recipe;
    const settings = measureSettings({ WORK: '/m' }, [], ROOT, none);
    const runFile = (groundedImagination: boolean, arm: 'imagined' | 'real') =>
      grpoRunFile(
        {
          settings,
          recipe: { ...recipe, grpo: { ...recipe.grpo, groundedImagination } },
          log: silent,
        },
        arm,
        0,
        '/m/out',
      );
    const command = (r: ReturnType<typeof runFile>) => r.hyperparameters.rollouts.command;
    for (const arm of ['imagined', 'real'] as const) {
      assert.equal(command(runFile(false, arm))[3], '/m/tasks/grpo');
      assert.ok(!command(runFile(false, arm)).includes('--max-examples'));
      const grounded = command(runFile(true, arm));
      assert.equal(grounded[3], '/m/tasks/grpo-grounded');
      const at = grounded.indexOf('--max-examples');
      assert.deepEqual(grounded.slice(at, at + 2), [
        '--max-examples',
        String(GROUNDED_MAX_EXAMPLES),
      ]);
      assert.ok(!('groundedImagination' in runFile(true, arm).hyperparameters));
    }
  });

  it('reads every size from the environment', () => {
    const env = { SEEDS: '3,4', BUDGETS: '8', HELDOUT: '5', EPISODES: '6', BASE: '/b' };
    const s = measureSettings(env, [], ROOT, none);
    assert.deepEqual([s.seeds, s.privateSeeds, s.budgets], [[3, 4], [3, 4], [8]]);
    assert.deepEqual([s.heldout, s.episodes, s.base], [5, 6, '/b']);
  });
});

describe('recipes: statistics and checks', () => {
  const evaluation = (success: number[]): Evaluation => ({
    trace: '',
    tasks: success.map((s, i) => ({ task: `t${i}`, success: s, reward: s })),
    fieldF1: [],
    keyJaccard: null,
    rehearsalValidity: null,
    actValidity: null,
  });

  it('pairs differences by task and bootstraps the same interval on every run', () => {
    const a = [evaluation([1, 1, 0, 1]), evaluation([1, 0, 0, 1])];
    const b = [evaluation([0, 1, 0, 0])];
    const d = difference('a-vs-b', 'success', a, b);
    assert.equal(d.tasks, 4);
    assert.equal(d.mean, (1 - 0 + (0.5 - 1) + 0 + 1) / 4);
    assert.deepEqual(difference('a-vs-b', 'success', a, b), d);
    assert.ok(d.ci95[0] <= d.mean && d.mean <= d.ci95[1]);
    assert.deepEqual(interval([[0.5]]), { mean: 0.5, low: 0.5, high: 0.5, n: 1 });
    assert.equal(summarise(a).fieldF1, null);
  });

  it('fails the GRPO sanity task unless the curve starts near chance and passes the goal', () => {
    const point = (iteration: number, success: number, nonzero = 1): CurvePoint => ({
      iteration,
      episodes: 8,
      success,
      choices: { phone: 4, email: 4, other: 0 },
      advantages: { rows: 8, nonzero_rows: nonzero },
    });
    assert.deepEqual(sanityFailures([point(0, 0.5), point(1, 0.95)]), []);
    assert.match(sanityFailures([point(0, 0.95)]).join(), /not near chance/);
    assert.match(sanityFailures([point(0, 0.5), point(1, 0.6)]).join(), /passed 0.9/);
    assert.match(sanityFailures([point(0, 0.5, 0), point(1, 0.95)]).join(), /iterations 0 had/);
    assert.match(sanityFailures([]).join(), /no GRPO iteration/);
    assert.match(curveTable([point(0, 0.5)]), /0\.50 +4 +4 +0 +1\/8/);
  });

  it('scores a validation run with nothing graded as zeros, not NaN', () => {
    const report = { successes: 0, graded: 0, meanReward: null, actParseValid: 0, turns: 0 };
    assert.deepEqual(validationScores({ ...report, rehearsalParseValid: 0, rehearsed: 0 }), {
      success: 0,
      meanReward: 0,
      toolCallParseValidity: 0,
      rehearsalJsonValidity: 0,
    });
  });

  it('prints a progress line for the trainer events a person follows, none for the rest', () => {
    const step = { event: 'step', command: 'sft', step: 3, steps: 10, loss: 1.5, roles: {} };
    assert.match(describeTrainerEvent(step) ?? '', /sft step 3\/10: loss 1\.5000/);
    assert.match(describeTrainerEvent({ event: 'error', code: 'X', message: 'm' }) ?? '', /X: m/);
    assert.equal(describeTrainerEvent({ event: 'done' }), undefined);
  });
});

describe('recipes: entry', () => {
  it('each npm script runs its recipe from the bundle', () => {
    const pkg = JSON.parse(readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const [name, recipe] of Object.entries(RECIPES)) {
      if (!recipe.script) continue;
      assert.match(pkg.scripts[recipe.script] ?? '', new RegExp(`node dist/recipes\\.js ${name}$`));
    }
  });
});
