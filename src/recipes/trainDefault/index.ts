import * as os from 'node:os';
import { safeInterval } from '../../core/base/timers';
import { makeDir, readJson, removeTree } from '../shared/files';
import type { ProgressLog } from '../shared/log';
import { progressLog } from '../shared/log';
import { Stages, StoppedAfter } from '../shared/stages';
import { requireCli, shown } from '../shared/studio';
import type { TrainContext } from './context';
import { trainPaths } from './context';
import { demonstrationsStage, tasksStage } from './data';
import * as path from 'node:path';
import { grpoStage } from './grpo';
import { realGrpoStage } from './realGrpo';
import { takeStart } from './start';
import { memoryStages, sftStages } from './models';
import { evalStage, modelStage } from './publish';
import type { Recipe, TrainDefaultSettings } from './settings';

/**
 * The policy the imagined GRPO starts from: the last SFT's, each stage run unless done; with
 * `--from`, START's copy (the training stages before it are taken from START).
 */
async function trainedStart(ctx: TrainContext): Promise<{ start: string; key?: string }> {
  if (ctx.settings.from) return takeStart(ctx);
  await sftStages(ctx);
  return { start: await memoryStages(ctx) };
}

/** Every stage in order; each is skipped when its mark is in WORK. */
async function allStages(ctx: TrainContext, loadSamples: number[]): Promise<void> {
  const { stages, recipe, settings } = ctx;
  await stages.run('tasks', 'tasks (train split: demonstrations + GRPO; test split)', () =>
    tasksStage(ctx),
  );
  await stages.run(
    'demonstrations',
    'demonstrations (reference policy, shadow mode, real tools)',
    () => demonstrationsStage(ctx),
  );
  const { start, key } = await trainedStart(ctx);
  // GRPO starts from the last SFT, real-rollout GRPO from the imagined GRPO's policy.
  if (settings.from !== 'grpo-real')
    await stages.run(
      'grpo',
      'GRPO with world rehearsal (imagined rollouts by the studio runner)',
      () => grpoStage(ctx, start),
    );
  if (recipe.realGrpo) {
    const realStart =
      settings.from === 'grpo-real'
        ? { start, key }
        : { start: path.join(ctx.paths.grpo, 'final') };
    await stages.run(
      'grpo-real',
      'GRPO on real rollouts (real tools), from the imagined GRPO',
      () => realGrpoStage(ctx, realStart.start, realStart.key),
    );
  }
  await stages.run('model', `the policy folder ${shown(ctx.settings.model)}`, () =>
    modelStage(ctx),
  );
  await stages.run('eval', 'evaluation on the test split (shadow mode, real tools)', () =>
    evalStage(ctx, loadSamples),
  );
}

/**
 * `npm run train:default`: builds the embedded default policy (models/default) from scratch by the
 * recipe in training/default/recipe.json: tasks of the built-in domains, demonstrations by the
 * reference policy, a tokenizer and a model, SFT, role-wise GRPO on imagined rollouts played by the
 * studio's runner, then (recipe.realGrpo) GRPO on real rollouts, export, and an evaluation on the
 * test split whose scores go into manifest.json.
 * The training runs (SFT, GRPO) are run files in WORK, started through the lifecycle `rehearse
 * train` and the editor use. Each stage is skipped when its output exists (the trainer itself
 * resumes an interrupted run); `--fresh` starts over; `--until <stage>` stops after a stage (e.g.
 * `--until init` prepares everything SFT needs, to run SFT on another machine with `rehearse train
 * --config <WORK>/sft.run.json`, or the trainer's own `<WORK>/sft-config.json`); `START=<policy>
 * --from grpo|grpo-real` takes the training stages before that one from a published policy.
 */
export async function trainDefault(
  settings: TrainDefaultSettings,
  log: ProgressLog = progressLog('train:default'),
): Promise<void> {
  requireCli();
  if (settings.fresh) await removeTree(settings.work);
  await makeDir(settings.work);
  const recipe = await readJson<Recipe>(settings.recipeFile);
  const stages = new Stages(settings.work, log, settings.until);
  const ctx: TrainContext = { settings, recipe, paths: trainPaths(settings.work), log, stages };
  // The machine's load while this command runs, for the manifest: wall times mean little without
  // what else shared the cores.
  const loadSamples = [loadAverage()];
  const timer = safeInterval(() => loadSamples.push(loadAverage()), 60_000);
  timer.unref();
  try {
    await allStages(ctx, loadSamples);
  } catch (err) {
    if (!(err instanceof StoppedAfter)) throw err;
    log(err.message);
    return;
  } finally {
    clearInterval(timer);
  }
  log(`done: ${shown(settings.model)}`);
}

function loadAverage(): number {
  return os.loadavg()[0];
}

export { isModelFolder } from './models';
