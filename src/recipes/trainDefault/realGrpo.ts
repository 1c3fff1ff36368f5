import * as path from 'node:path';
import type { GrpoPlan } from './grpoArm';
import { armFolder, grpoArmOf } from './grpoArm';
import { removeTree } from '../shared/files';
import { rehearse } from '../shared/studio';
import type { TrainContext } from './context';
import type { RealGrpoRecipe } from './settings';

/** Where the real-rollout GRPO stage trains (its run folder is measure:envace's arm layout). */
const FOLDER = 'grpo-real';

/** The real-rollout GRPO stage's tasks folder. */
function tasksDir(ctx: TrainContext): string {
  return path.join(ctx.settings.work, 'tasks/grpo-real');
}

/** What that folder holds: the part of the stage's key its tasks give. */
function tasksHeld(ctx: TrainContext, real: RealGrpoRecipe) {
  return {
    domains: ctx.recipe.domains,
    split: 'train',
    start: real.start,
    perDomain: real.tasksPerDomain,
  };
}

/** The stage's plan: measure:envace's real arm at the recipe's dose, from `start`. */
export function realGrpoPlan(
  ctx: TrainContext,
  real: RealGrpoRecipe,
  start: string,
  startKey?: string,
): GrpoPlan {
  return {
    ...(startKey ? { baseKey: startKey } : {}),
    work: ctx.settings.work,
    base: start,
    tasks: { dir: tasksDir(ctx), holds: tasksHeld(ctx, real) },
    tasksPerIteration: real.tasksPerIteration,
    iterations: real.iterations,
    miniBatchEpisodes: real.miniBatchEpisodes,
    ppoEpochs: real.ppoEpochs,
    lr: real.lr,
  };
}

/** The policy the real-rollout GRPO stage ends with (where {@link grpoArmOf} puts it). */
export function realGrpoFinal(ctx: TrainContext): string {
  return path.join(armFolder(ctx.settings.work, FOLDER, 'real', ctx.recipe.seed), 'final');
}

/**
 * GRPO on real rollouts from `start` (recipe.realGrpo): the recipe's GRPO settings at the dose
 * measure:envace gave its real arm, on new train-split tasks, through the training-run lifecycle
 * (an interrupted run resumes from its checkpoint). `startKey`: the key of `start`'s contents when
 * they may change under the same path (START's copy).
 */
export async function realGrpoStage(
  ctx: TrainContext,
  start: string,
  startKey?: string,
): Promise<void> {
  const { recipe, settings } = ctx;
  const real = recipe.realGrpo!;
  const dir = tasksDir(ctx);
  await removeTree(dir);
  for (const domain of recipe.domains)
    await rehearse(
      ...['generate', domain, '--split', 'train', '--start', String(real.start)],
      ...['--count', String(real.tasksPerDomain), '--out', path.join(dir, domain)],
    );
  const plan = realGrpoPlan(ctx, real, start, startKey);
  const where = { folder: FOLDER, prefix: `${FOLDER}-` };
  const { final, run } = await grpoArmOf(recipe, plan, ctx.log, 'real', recipe.seed, where);
  ctx.log(
    `  real GRPO: ${run.steps} steps (${run.actUpdates} with act tokens), ${run.episodes} episodes; ${path.relative(settings.work, final)}`,
  );
}
