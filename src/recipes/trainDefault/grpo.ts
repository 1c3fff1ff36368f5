import * as path from 'node:path';
import { removeTree } from '../shared/files';
import { CLI, RECIPES } from '../shared/studio';
import { trainingRun } from '../shared/training';
import type { TrainContext } from './context';
import { eventLogger } from './context';
import { generate, groundTasks } from './data';
import { writeRunFile } from './runFiles';
import type { GrpoRecipe, JsonObject } from './settings';
import { groundedRolloutArgs } from './settings';

/**
 * The rollout command GRPO runs each iteration: `rehearse rollout` of the GRPO tasks with the
 * exported checkpoint, imagined (the policy rehearses the tools). Placeholders in braces are the
 * trainer's (docs/training-runs.md).
 */
export function rolloutCommand(tasks: string, grpo: GrpoRecipe): string[] {
  return [
    process.execPath,
    CLI,
    'rollout',
    tasks,
    ...['--policy', '{model_dir}', '--out', '{out}'],
    ...['--episodes', String(grpo.episodes), '--temperature', String(grpo.temperature)],
    ...['--seed', '{seed}', '--group', 'iter{iteration}', '--runs', '{run_dir}/rollout-runs'],
    // One act row per episode (train_history), as the default recipe was tuned, unless the recipe says `turn`.
    ...['--act-rows', grpo.actRows ?? 'episode'],
    // Grounded imagination: the tasks' examples (their reference's real responses) in the rehearse prompt.
    ...groundedRolloutArgs(grpo),
    // A new batch of the GRPO tasks each iteration, when the recipe says how many.
    ...(grpo.tasksPerIteration
      ? ['--batch-size', String(grpo.tasksPerIteration), '--batch', '{iteration}']
      : []),
  ];
}

/** Held-out validation while GRPO trains: `validate-policy` of this bundle on the validation tasks. */
export function validationSettings(tasks: string, every: number): JsonObject {
  return {
    every,
    metric: 'success',
    tie_metric: 'meanReward',
    keep_best: true,
    command: [
      process.execPath,
      RECIPES,
      'validate-policy',
      tasks,
      '{model_dir}',
      '{out}',
      '{run_dir}/validation-runs/iter{iteration}',
    ],
  };
}

/** The GRPO run's trainer settings: the recipe's, without what only this recipe reads. */
export function grpoHyperparameters(ctx: TrainContext): JsonObject {
  const grpo = ctx.recipe.grpo;
  const {
    threads: _threads,
    episodes: _episodes,
    temperature,
    actRows: _actRows,
    validation,
    tasksPerIteration: _tasksPerIteration,
    groundedImagination: _groundedImagination,
    ...rest
  } = grpo;
  const { tasks } = ctx.paths;
  return {
    ...rest,
    grpo: { ...rest.grpo, temperature },
    ...(validation ? { validation: validationSettings(tasks.validation, validation.every) } : {}),
    train: { ...rest.train, export_at_end: true },
    rollouts: { command: rolloutCommand(grpoTasks(ctx), grpo) },
  };
}

/** The tasks GRPO rolls out: the grounded copies when the recipe grounds its imagination. */
export function grpoTasks(ctx: TrainContext): string {
  const { tasks } = ctx.paths;
  return ctx.recipe.grpo.groundedImagination ? tasks.grpoGrounded : tasks.grpo;
}

/**
 * GRPO with world rehearsal from `start`: imagined rollouts played by the studio's runner (grounded
 * in the tasks' reference with recipe.grpo.groundedImagination); with recipe.grpo.validation,
 * validated on the validation split (never the test split), the final policy being the best
 * validated point's.
 */
export async function grpoStage(ctx: TrainContext, start: string): Promise<void> {
  const { recipe, paths } = ctx;
  // Only the GRPO tasks are grounded; the validation tasks below are played without examples.
  if (recipe.grpo.groundedImagination)
    ctx.log(`  ${await groundTasks(paths.tasks.grpo, paths.tasks.grpoGrounded)}`);
  const validation = recipe.grpo.validation;
  if (validation) {
    await removeTree(paths.tasks.validation);
    for (const domain of recipe.domains)
      await generate(
        domain,
        'validation',
        validation.tasks,
        path.join(paths.tasks.validation, domain),
      );
  }
  const runFile = await writeRunFile(ctx, 'grpo', {
    objective: 'grpo',
    base: start,
    outDir: paths.grpo,
    ...(recipe.grpo.threads !== undefined ? { threads: recipe.grpo.threads } : {}),
    hyperparameters: grpoHyperparameters(ctx),
  });
  await trainingRun(runFile, { onEvent: eventLogger(ctx) });
}
