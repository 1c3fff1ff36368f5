import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { TrainerEvent } from '../../core/training/launch/supervisor';
import { moveTo, removeTree, writeJson, writeText } from '../shared/files';
import type { ProgressLog } from '../shared/log';
import { rolloutCompute } from '../shared/rolloutTraces';
import { cachedStep, stepKey } from '../shared/stages';
import { CLI } from '../shared/studio';
import { trainingRun } from '../shared/training';
import type { Recipe } from './settings';
import { groundedRolloutArgs } from './settings';

// A GRPO arm at a set dose, through the training-run lifecycle: measure:envace's arms, the foresight
// arms, and train:default's real-rollout stage all train through this one path.

/** A folder of evaluation tasks, and what it holds (the part of an evaluation's key it gives). */
export interface TaskFolder {
  dir: string;
  holds: unknown;
}

/** The arms of A: rollouts imagined (the policy rehearses the tools) or real (`rollout --real`). */
export type Arm = 'imagined' | 'real';

/** What a GRPO arm trains from, on what, at what dose: measure:envace's, or another recipe's. */
export interface GrpoPlan {
  work: string;
  /** The model every arm starts from. */
  base: string;
  /** The GRPO tasks' folder: each iteration plays the next `tasksPerIteration` of them. */
  tasks: TaskFolder;
  tasksPerIteration: number;
  iterations: number;
  /** Episodes a task; default the recipe's own (recipe.grpo.episodes). */
  episodes?: number;
  miniBatchEpisodes: number;
  ppoEpochs: number;
  lr: number;
  /** The key of the step that made `base`, when a recipe made it (its path stays the same). */
  baseKey?: string;
}

/**
 * The GRPO run file of one arm and seed. The recipe's own rollout plan (validation, batches, act
 * rows) is train:default's, not this comparison's: every arm plays the same new GRPO tasks each
 * iteration, without validation, with one act row per episode, at the dose of {@link armDose}.
 */
export function grpoRunFileOf(
  recipe: Recipe,
  plan: GrpoPlan,
  arm: Arm,
  seed: number,
  outDir: string,
) {
  const {
    threads,
    episodes,
    temperature,
    validation: _v,
    tasksPerIteration: _t,
    actRows: _a,
    groundedImagination: _g,
    ...rest
  } = recipe.grpo;
  const dose = armDose(plan);
  const rollouts = [
    ...[process.execPath, CLI, 'rollout', plan.tasks.dir],
    ...['--policy', '{model_dir}', '--out', '{out}'],
    ...['--episodes', String(plan.episodes ?? episodes), '--temperature', String(temperature)],
    ...['--seed', '{seed}', '--group', 'iter{iteration}', '--runs', '{run_dir}/rollout-runs'],
    ...['--act-rows', 'episode', ...(arm === 'real' ? ['--real'] : [])],
    ...groundedRolloutArgs(recipe.grpo),
    ...dose.rollout,
  ];
  return {
    name: `grpo-${arm}-seed${seed}`,
    objective: 'grpo',
    base: plan.base,
    out_dir: outDir,
    seed,
    hardware: threads !== undefined ? { threads } : {},
    hyperparameters: {
      ...rest,
      grpo: { ...rest.grpo, ...dose.grpo, temperature },
      optim: { ...(rest.optim as object | undefined), ...dose.optim },
      train: { ...rest.train, export_at_end: true },
      rollouts: { command: rollouts },
    },
  };
}

/**
 * The dose both trained arms get, so that they make the same act updates: each iteration plays
 * `tasksPerIteration` new tasks (the next `--batch` of the GRPO tasks: GRPO_TASKS per domain in
 * measure:envace), mini-batches are MINI_BATCH episodes with all their rows, and each role's tokens
 * are averaged apart (`role-token-mean`). With one act row per episode an imagined step and a real
 * step then train the same act rows at the same weight, whatever rehearse rows the imagined one adds.
 */
export function armDose(plan: GrpoPlan) {
  return {
    rollout: ['--batch-size', String(plan.tasksPerIteration), '--batch', '{iteration}'],
    grpo: {
      iterations: plan.iterations,
      mini_batch_size: plan.miniBatchEpisodes,
      mini_batch_unit: 'episode',
      loss_agg: 'role-token-mean',
      ppo_epochs: plan.ppoEpochs,
    },
    optim: { lr: plan.lr, schedule: 'constant' },
  };
}

/** What a GRPO arm's run did: its rollouts' act reward means, act updates, compute. */
export interface ArmRun {
  rolloutRewardMeans: number[];
  /** Optimizer steps that trained act tokens, and those tokens (the trainer's `done` event). */
  actUpdates: number;
  actTokens: number;
  steps: number;
  episodes: number;
  realToolCalls: number;
  unparsableRehearsalEnds: number;
}

/**
 * Moves a training run's folder aside when it was made under another key (its checkpoints would
 * resume a run of other settings) to `<out>.previous` (one kept: an older one there is replaced),
 * and records the key it is made under now. Nothing trained is deleted by a change of settings that
 * may be undone, such as running the recipe from another checkout.
 */
export async function keepOnlyUnder(out: string, key: string, log: ProgressLog): Promise<void> {
  const keyFile = `${out}.key`;
  const made = existsSync(keyFile) ? (await readFile(keyFile, 'utf8')).trim() : undefined;
  if (existsSync(out) && made !== key) {
    const previous = `${out}.previous`;
    await removeTree(previous);
    await moveTo(out, previous);
    if (made !== undefined) await writeText(`${previous}.key`, made + '\n');
    log(
      `  ${path.basename(out)}: made under other settings; starting it over (the old run is in ${path.basename(previous)})`,
    );
  }
  await writeText(keyFile, key + '\n');
}

/** Where {@link grpoArmOf} trains an arm and seed: `<work>/<folder>/<arm>-seed<seed>`. */
export function armFolder(work: string, folder: string, arm: Arm, seed: number): string {
  return path.join(work, folder, `${arm}-seed${seed}`);
}

/**
 * GRPO from the plan's base through the training-run lifecycle (once; an interrupted run resumes
 * from its checkpoint), in `<work>/<folder>/<arm>-seed<seed>`, its step named `<prefix><arm>-seed<seed>`;
 * returns the trained model folder, what the run did, and the key it was made under.
 */
export async function grpoArmOf(
  recipe: Recipe,
  plan: GrpoPlan,
  log: ProgressLog,
  arm: Arm,
  seed: number,
  where: { folder: string; prefix: string } = { folder: 'grpo', prefix: 'grpo-' },
) {
  const { work } = plan;
  const name = `${where.prefix}${arm}-seed${seed}`;
  const out = armFolder(work, where.folder, arm, seed);
  const run = grpoRunFileOf(recipe, plan, arm, seed, out);
  const key = stepKey({ run, tasks: plan.tasks.holds, base: plan.baseKey });
  const done = await cachedStep(work, { name, key }, log, async (): Promise<ArmRun> => {
    await keepOnlyUnder(out, key, log);
    const runFile = path.join(work, `${name}.run.json`);
    await writeJson(runFile, run);
    const rewards: number[] = [];
    const counts = { actUpdates: 0, actTokens: 0, steps: 0 };
    const onEvent = (e: TrainerEvent) => {
      const act = (e.roles as { act?: { reward_mean: number } } | undefined)?.act;
      if (e.event === 'rollouts' && act) {
        rewards.push(act.reward_mean);
        const iteration = Number(e.iteration ?? rewards.length - 1) + 1;
        log(
          `  ${arm} seed ${seed}: rollouts of iteration ${iteration}, act reward mean ${act.reward_mean.toFixed(3)}`,
        );
      }
      if (e.event === 'iteration')
        log(
          `  ${arm} seed ${seed}: iteration ${Number(e.iteration) + 1}: ${String(e.steps)} steps, ${String(e.act_updates)} with act tokens`,
        );
      if (e.event === 'done') {
        // The whole run's, a resumed run's earlier part included (kept in the trainer's checkpoint).
        counts.actUpdates = Number(e.act_updates ?? 0);
        counts.actTokens = Number(e.act_tokens ?? 0);
        counts.steps = Number(e.steps ?? 0);
      }
      if (e.event === 'resume') log(`  ${arm} seed ${seed}: resumed from step ${String(e.step)}`);
      if (e.event === 'error') log(`  trainer error: ${String(e.code)}: ${String(e.message)}`);
    };
    await trainingRun(runFile, { onEvent });
    return {
      rolloutRewardMeans: rewards,
      ...counts,
      ...(await rolloutCompute(path.join(out, 'rollout-runs'))),
    };
  });
  return { final: path.join(out, 'final'), run: done, key };
}
