import * as path from 'node:path';
import type { ProgressLog } from '../shared/log';
import { cachedStep, stepKey } from '../shared/stages';
import { rehearse } from '../shared/studio';
import type { Arm, GrpoPlan, TaskFolder } from '../trainDefault/grpoArm';
import { grpoArmOf, grpoRunFileOf } from '../trainDefault/grpoArm';
import type { Recipe } from '../trainDefault/settings';
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
 * Per-task outcomes of one evaluation run of `policy` on `tasks` (`rehearse run ... --json`, with
 * `runArgs`), and its report's figures, once (a cached step of `work`). `trained`: the key of the
 * training run that made `policy`, when one did (its folder's path stays the same when its settings
 * change).
 */
export function evaluateOn(
  step: { work: string; log: ProgressLog; tasks: TaskFolder },
  name: string,
  policy: string,
  runArgs: string[] = [],
  trained?: string,
): Promise<Evaluation> {
  const { work, log, tasks } = step;
  const key = stepKey({ tasks: tasks.holds, policy, runArgs, trained });
  return cachedStep(work, { name, key }, log, async () => {
    const out = await rehearse(
      ...['run', tasks.dir, '--policy', policy],
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

/** {@link evaluateOn} measure:envace's held-out tasks. */
export function evaluate(
  ctx: MeasureContext,
  name: string,
  policy: string,
  runArgs: string[] = [],
  trained?: string,
): Promise<Evaluation> {
  const { work } = ctx.settings;
  const tasks = { dir: path.join(work, 'tasks/heldout'), holds: heldoutTasksOf(ctx.settings) };
  return evaluateOn({ work, log: ctx.log, tasks }, name, policy, runArgs, trained);
}

/** measure:envace's GRPO plan (grounded imagination: the GRPO tasks with their real responses). */
export function grpoPlan(ctx: MeasureContext): GrpoPlan {
  const s = ctx.settings;
  const tasks = ctx.recipe.grpo.groundedImagination ? 'tasks/grpo-grounded' : 'tasks/grpo';
  return {
    work: s.work,
    base: s.base,
    tasks: { dir: path.join(s.work, tasks), holds: grpoTasksOf(s) },
    tasksPerIteration: s.grpoTasks * DOMAINS.length,
    iterations: s.iterations,
    ...(s.episodes !== undefined ? { episodes: s.episodes } : {}),
    miniBatchEpisodes: s.miniBatchEpisodes,
    ppoEpochs: s.ppoEpochs,
    lr: s.lr,
  };
}

/** measure:envace's GRPO run file of one arm and seed ({@link grpoRunFileOf}). */
export function grpoRunFile(ctx: MeasureContext, arm: Arm, seed: number, outDir: string) {
  return grpoRunFileOf(ctx.recipe, grpoPlan(ctx), arm, seed, outDir);
}

/** measure:envace's GRPO arm of one seed, from BASE ({@link grpoArmOf}). */
export function grpoArm(ctx: MeasureContext, arm: Arm, seed: number) {
  return grpoArmOf(ctx.recipe, grpoPlan(ctx), ctx.log, arm, seed);
}
