import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { TrainerEvent } from '../../core/training/launch/supervisor';
import { removeTree, writeJson, writeText } from '../shared/files';
import type { ProgressLog } from '../shared/log';
import { cachedStep, stepKey } from '../shared/stages';
import { CLI, rehearse } from '../shared/studio';
import { trainingRun } from '../shared/training';
import type { Recipe } from '../trainDefault/settings';
import { groundedRolloutArgs } from '../trainDefault/settings';
import { rolloutCompute } from './rolloutTraces';
import type { MeasureSettings } from './settings';
import { DOMAINS, GRPO_START, HELDOUT_START } from './settings';
import type { Evaluation } from './stats';

/** What every step of measure:envace reads. */
export interface MeasureContext {
  settings: MeasureSettings;
  recipe: Recipe;
  log: ProgressLog;
}

interface RunJson {
  run: { traceFile: string; episodes: { taskId: string; success?: boolean; reward?: number }[] };
  report: {
    overall: { keyJaccard: number | null };
    rehearsed: number;
    rehearsalParseValid: number;
    turns: number;
    actParseValid: number;
  };
}

/** The GRPO tasks per domain: every iteration plays GRPO_TASKS new ones per domain. */
export const grpoTaskCount = (s: MeasureSettings) => s.grpoTasks * s.iterations;

/** What the GRPO tasks folder holds (the tasks step makes it). */
const grpoTasksOf = (s: MeasureSettings) => ({
  domains: DOMAINS,
  split: 'train',
  start: GRPO_START,
  perDomain: grpoTaskCount(s),
});

/** What the held-out tasks folder holds (the tasks step makes it). */
const heldoutTasksOf = (s: MeasureSettings) => ({
  domains: DOMAINS,
  split: 'test',
  start: HELDOUT_START,
  perDomain: s.heldout,
});

/** The key of the tasks step: a step that reads a task folder has that folder's part in its key. */
export function tasksKey(s: MeasureSettings): string {
  return stepKey({ grpo: grpoTasksOf(s), heldout: heldoutTasksOf(s) });
}

/**
 * Per-task outcomes of one evaluation run on the held-out tasks, and its report's figures (once).
 * `trained`: the key of the training run that made `policy`, when one did (its folder's path stays
 * the same when its settings change).
 */
export function evaluate(
  ctx: MeasureContext,
  name: string,
  policy: string,
  runArgs: string[] = [],
  trained?: string,
): Promise<Evaluation> {
  const { work } = ctx.settings;
  const key = stepKey({ tasks: heldoutTasksOf(ctx.settings), policy, runArgs, trained });
  return cachedStep(work, { name, key }, ctx.log, async () => {
    const out = await rehearse(
      ...['run', path.join(work, 'tasks/heldout'), '--policy', policy],
      ...['--out', path.join(work, 'runs', name), '--no-progress', '--json', ...runArgs],
    );
    const { run: summary, report } = JSON.parse(out) as RunJson;
    const calls =
      (
        JSON.parse(await rehearse('report', summary.traceFile, '--calls', '--json')) as {
          callList?: { fieldF1: number | null }[];
        }
      ).callList ?? [];
    return {
      trace: summary.traceFile,
      tasks: summary.episodes.map((e) => ({
        task: e.taskId,
        success: e.success ? 1 : 0,
        reward: e.reward ?? 0,
      })),
      fieldF1: calls.flatMap((c) => (c.fieldF1 === null ? [] : [c.fieldF1])),
      keyJaccard: report.overall.keyJaccard,
      rehearsalValidity: report.rehearsed ? report.rehearsalParseValid / report.rehearsed : null,
      actValidity: report.turns ? report.actParseValid / report.turns : null,
    };
  });
}

/** The arms of A: rollouts imagined (the policy rehearses the tools) or real (`rollout --real`). */
export type Arm = 'imagined' | 'real';

/**
 * The GRPO run file of one arm and seed. The recipe's own rollout plan (validation, batches, act
 * rows) is train:default's, not this comparison's: every arm plays the same new GRPO tasks each
 * iteration, without validation, with one act row per episode, at the dose of {@link armDose}.
 */
export function grpoRunFile(ctx: MeasureContext, arm: Arm, seed: number, outDir: string) {
  const { settings } = ctx;
  const {
    threads,
    episodes,
    temperature,
    validation: _v,
    tasksPerIteration: _t,
    actRows: _a,
    groundedImagination,
    ...rest
  } = ctx.recipe.grpo;
  // Grounded imagination: the GRPO tasks with their reference's real responses (tasks()).
  const tasks = groundedImagination ? 'tasks/grpo-grounded' : 'tasks/grpo';
  const rollouts = [
    ...[process.execPath, CLI, 'rollout', path.join(settings.work, tasks)],
    ...['--policy', '{model_dir}', '--out', '{out}'],
    ...['--episodes', String(settings.episodes ?? episodes), '--temperature', String(temperature)],
    ...['--seed', '{seed}', '--group', 'iter{iteration}', '--runs', '{run_dir}/rollout-runs'],
    ...['--act-rows', 'episode', ...(arm === 'real' ? ['--real'] : [])],
    ...groundedRolloutArgs(ctx.recipe.grpo),
    ...armDose(settings).rollout,
  ];
  return {
    name: `grpo-${arm}-seed${seed}`,
    objective: 'grpo',
    base: settings.base,
    out_dir: outDir,
    seed,
    hardware: threads !== undefined ? { threads } : {},
    hyperparameters: {
      ...rest,
      grpo: { ...rest.grpo, ...armDose(settings).grpo, temperature },
      optim: { ...(rest.optim as object | undefined), ...armDose(settings).optim },
      train: { ...rest.train, export_at_end: true },
      rollouts: { command: rollouts },
    },
  };
}

/**
 * The dose both trained arms get, so that they make the same act updates: each iteration plays
 * GRPO_TASKS new tasks per domain (the next `--batch` of the GRPO tasks), mini-batches are
 * MINI_BATCH episodes with all their rows, and each role's tokens are averaged apart
 * (`role-token-mean`). With one act row per episode an imagined step and a real step then train the
 * same act rows at the same weight, whatever rehearse rows the imagined one adds.
 */
export function armDose(s: MeasureSettings) {
  return {
    rollout: ['--batch-size', String(s.grpoTasks * DOMAINS.length), '--batch', '{iteration}'],
    grpo: {
      iterations: s.iterations,
      mini_batch_size: s.miniBatchEpisodes,
      mini_batch_unit: 'episode',
      loss_agg: 'role-token-mean',
      ppo_epochs: s.ppoEpochs,
    },
    optim: { lr: s.lr, schedule: 'constant' },
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
 * Removes a training run's folder when it was made under another key (its checkpoints would resume
 * a run of other settings), and records the key it is made under now.
 */
async function keepOnlyUnder(out: string, key: string, log: ProgressLog): Promise<void> {
  const keyFile = `${out}.key`;
  const made = existsSync(keyFile) ? (await readFile(keyFile, 'utf8')).trim() : undefined;
  if (existsSync(out) && made !== key) {
    log(`  ${path.basename(out)}: made under other settings; starting it over`);
    await removeTree(out);
  }
  await writeText(keyFile, key + '\n');
}

/**
 * GRPO from BASE through the training-run lifecycle (once; an interrupted run resumes from its
 * checkpoint); returns the trained model folder, what the run did, and the key it was made under.
 */
export async function grpoArm(ctx: MeasureContext, arm: Arm, seed: number) {
  const { work } = ctx.settings;
  const name = `grpo-${arm}-seed${seed}`;
  const out = path.join(work, 'grpo', `${arm}-seed${seed}`);
  const run = grpoRunFile(ctx, arm, seed, out);
  const key = stepKey({ run, tasks: grpoTasksOf(ctx.settings) });
  const done = await cachedStep(work, { name, key }, ctx.log, async (): Promise<ArmRun> => {
    await keepOnlyUnder(out, key, ctx.log);
    const runFile = path.join(work, `${name}.run.json`);
    await writeJson(runFile, run);
    const rewards: number[] = [];
    const counts = { actUpdates: 0, actTokens: 0, steps: 0 };
    const onEvent = (e: TrainerEvent) => {
      const act = (e.roles as { act?: { reward_mean: number } } | undefined)?.act;
      if (e.event === 'rollouts' && act) {
        rewards.push(act.reward_mean);
        const iteration = Number(e.iteration ?? rewards.length - 1) + 1;
        ctx.log(
          `  ${arm} seed ${seed}: rollouts of iteration ${iteration}, act reward mean ${act.reward_mean.toFixed(3)}`,
        );
      }
      if (e.event === 'iteration')
        ctx.log(
          `  ${arm} seed ${seed}: iteration ${Number(e.iteration) + 1}: ${String(e.steps)} steps, ${String(e.act_updates)} with act tokens`,
        );
      if (e.event === 'done') {
        // The whole run's, a resumed run's earlier part included (kept in the trainer's checkpoint).
        counts.actUpdates = Number(e.act_updates ?? 0);
        counts.actTokens = Number(e.act_tokens ?? 0);
        counts.steps = Number(e.steps ?? 0);
      }
      if (e.event === 'resume')
        ctx.log(`  ${arm} seed ${seed}: resumed from step ${String(e.step)}`);
      if (e.event === 'error') ctx.log(`  trainer error: ${String(e.code)}: ${String(e.message)}`);
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
