import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { TrainerEvent } from '../../core/training/launch/supervisor';
import { writeJson } from '../shared/files';
import type { ProgressLog } from '../shared/log';
import { cachedStep } from '../shared/stages';
import { CLI, rehearse } from '../shared/studio';
import { trainingRun } from '../shared/training';
import type { Recipe } from '../trainDefault/settings';
import { groundedRolloutArgs } from '../trainDefault/settings';
import type { MeasureSettings } from './settings';
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

/** Per-task outcomes of one evaluation run on the held-out tasks, and its report's figures (once). */
export function evaluate(
  ctx: MeasureContext,
  name: string,
  policy: string,
  runArgs: string[] = [],
): Promise<Evaluation> {
  const { work } = ctx.settings;
  return cachedStep(work, name, ctx.log, async () => {
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

/** What a GRPO arm's rollouts cost: episodes played and real tool calls made (trace events). */
export async function rolloutCompute(runsDir: string) {
  let episodes = 0;
  let realToolCalls = 0;
  if (!existsSync(runsDir)) return { episodes, realToolCalls };
  for (const run of await readdir(runsDir)) {
    const trace = path.join(runsDir, run, 'trace.jsonl');
    if (!existsSync(trace)) continue;
    for (const line of (await readFile(trace, 'utf8')).split('\n')) {
      if (line.includes('"type":"episode.end"')) episodes++;
      else if (line.includes('"type":"call.actual"')) realToolCalls++;
    }
  }
  return { episodes, realToolCalls };
}

/** The arms of A: rollouts imagined (the policy rehearses the tools) or real (`rollout --real`). */
export type Arm = 'imagined' | 'real';

/**
 * The GRPO run file of one arm and seed. The recipe's own rollout plan (validation, batches, act
 * rows) is train:default's, not this comparison's: every arm plays the same GRPO tasks each
 * iteration, without validation, with one act row per episode (as the published figures were).
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
      grpo: { ...rest.grpo, iterations: settings.iterations, temperature },
      train: { ...rest.train, export_at_end: true },
      rollouts: { command: rollouts },
    },
  };
}

/** GRPO from BASE through the training-run lifecycle (once); returns the trained model folder. */
export async function grpoArm(ctx: MeasureContext, arm: Arm, seed: number): Promise<string> {
  const { work } = ctx.settings;
  const name = `grpo-${arm}-seed${seed}`;
  const out = path.join(work, 'grpo', `${arm}-seed${seed}`);
  await cachedStep(work, name, ctx.log, async () => {
    const runFile = path.join(work, `${name}.run.json`);
    await writeJson(runFile, grpoRunFile(ctx, arm, seed, out));
    const rewards: number[] = [];
    const onEvent = (e: TrainerEvent) => {
      const act = (e.roles as { act?: { reward_mean: number } } | undefined)?.act;
      if (e.event === 'rollouts' && act) {
        rewards.push(act.reward_mean);
        const iteration = Number(e.iteration ?? rewards.length - 1) + 1;
        ctx.log(
          `  ${arm} seed ${seed}: rollouts of iteration ${iteration}, act reward mean ${act.reward_mean.toFixed(3)}`,
        );
      }
      if (e.event === 'resume')
        ctx.log(`  ${arm} seed ${seed}: resumed from step ${String(e.step)}`);
      if (e.event === 'error') ctx.log(`  trainer error: ${String(e.code)}: ${String(e.message)}`);
    };
    await trainingRun(runFile, { onEvent });
    return {
      rolloutRewardMeans: rewards,
      ...(await rolloutCompute(path.join(out, 'rollout-runs'))),
    };
  });
  return path.join(out, 'final');
}
