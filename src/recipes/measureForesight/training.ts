import * as path from 'node:path';
import { writeJson } from '../shared/files';
import { cachedStep, stepKey } from '../shared/stages';
import { describeTrainerEvent } from '../shared/trainerEvents';
import { trainingRun } from '../shared/training';
import type { GrpoPlan } from '../trainDefault/grpoArm';
import { grpoArmOf, keepOnlyUnder } from '../trainDefault/grpoArm';
import type { JsonObject } from '../trainDefault/settings';
import type { ForesightContext } from './context';
import type { Rows } from './data';
import { taskFolder } from './data';

/** The two SFT arms: the main family's demonstrations (no refusal), or the twin's (both verdicts). */
export type SftArm = 'foresight' | 'twin';

/**
 * The run file of one SFT arm: continued SFT from BASE (its tokenizer and prompt settings kept) on
 * `rows`, with the recipe's SFT settings, the optimizer of its memory SFT (the recipe's continued
 * SFT) when it has one, and SFT_STEPS steps of SFT_BATCH rows, exported at the end.
 */
export function sftRunFile(ctx: ForesightContext, arm: SftArm, rows: readonly Rows[]) {
  const s = ctx.settings;
  const { threads, processes = 1, probe: _probe, ...rest } = ctx.recipe.sft;
  const optim = (ctx.recipe.memory?.sft.optim ?? rest.optim) as JsonObject | undefined;
  return {
    processes,
    run: {
      name: `sft-${arm}`,
      objective: 'sft',
      base: s.base,
      out_dir: path.join(s.work, 'sft', arm),
      seed: ctx.recipe.seed,
      data: { train: rows.map((r) => r.file) },
      hardware: {
        ...(threads !== undefined ? { threads } : {}),
        ...(processes > 1 ? { processes } : {}),
      },
      hyperparameters: {
        ...rest,
        ...(optim ? { optim } : {}),
        train: { ...rest.train, steps: s.sftSteps, batch_size: s.sftBatch, export_at_end: true },
      },
    },
  };
}

/** One SFT arm (once; an interrupted run resumes): its model folder and the key it was made under. */
export async function sftArm(ctx: ForesightContext, arm: SftArm, rows: readonly Rows[]) {
  const { work } = ctx.settings;
  const { run, processes } = sftRunFile(ctx, arm, rows);
  const key = stepKey({ run, rows: rows.map((r) => r.key) });
  await cachedStep(work, { name: `sft-${arm}`, key }, ctx.log, async () => {
    await keepOnlyUnder(run.out_dir, key, ctx.log);
    const runFile = path.join(work, `sft-${arm}.run.json`);
    await writeJson(runFile, run);
    await trainingRun(runFile, {
      processes,
      onEvent: (e) => {
        const line = describeTrainerEvent(e);
        if (line !== undefined) ctx.log(line);
      },
    });
    return { rows: rows.map((r) => ({ file: path.basename(r.file), rows: r.rows })) };
  });
  return { final: path.join(run.out_dir, 'final'), key };
}

/**
 * Imagined GRPO from the foresight SFT on the main family's GRPO tasks (both verdicts; imagination
 * never grounded: the world model must know the rule itself), at measure:envace's dose, one run a
 * seed. Its key holds the SFT's.
 */
export function foresightGrpo(
  ctx: ForesightContext,
  sft: { final: string; key: string },
  seed: number,
) {
  const s = ctx.settings;
  const plan: GrpoPlan = {
    work: s.work,
    base: sft.final,
    baseKey: sft.key,
    tasks: taskFolder(ctx, 'grpo'),
    tasksPerIteration: s.grpoTasks,
    iterations: s.iterations,
    ...(s.episodes !== undefined ? { episodes: s.episodes } : {}),
    miniBatchEpisodes: s.miniBatchEpisodes,
    ppoEpochs: s.ppoEpochs,
    lr: s.lr,
  };
  const recipe = { ...ctx.recipe, grpo: { ...ctx.recipe.grpo, groundedImagination: false } };
  return grpoArmOf(recipe, plan, ctx.log, 'imagined', seed);
}
