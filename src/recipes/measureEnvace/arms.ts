import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import * as path from 'node:path';
import { TASK_FILE_SUFFIX } from '../../core/tasks/format/loader';
import type { ProgressLog } from '../shared/log';
import { cachedStep, stepKey } from '../shared/stages';
import { rehearse, shown } from '../shared/studio';
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
  return stepKey({
    grpo: grpoTasksOf(s),
    heldout: s.heldoutTasks ? 'HELDOUT_TASKS' : heldoutTasksOf(s),
  });
}

/** Tasks an evaluation plays: a folder, or (`files`) the task files of it picked. */
export interface EvalTasks extends TaskFolder {
  files?: string[];
}

/**
 * HELDOUT_TASKS's task files: the folder's `*.task.json` files (not its subfolders') by name, the
 * first `first` of them when set. What they hold is their names and a digest of their content, so
 * that an evaluation runs again when the folder changes. Throws for a folder without task files.
 */
export async function heldoutTaskFiles(h: { dir: string; first?: number }): Promise<EvalTasks> {
  let names: string[];
  try {
    names = (await readdir(h.dir)).filter((n) => n.endsWith(TASK_FILE_SUFFIX)).sort();
  } catch (err) {
    throw new Error(`HELDOUT_TASKS ${h.dir} cannot be read (${String(err)}).`);
  }
  const picked = h.first === undefined ? names : names.slice(0, h.first);
  if (!picked.length)
    throw new Error(
      `HELDOUT_TASKS ${h.dir} holds no *${TASK_FILE_SUFFIX} file: import some (e.g. rehearse import tau2 --domain retail) or fix the folder.`,
    );
  const digest = createHash('sha256');
  for (const name of picked)
    digest
      .update(`${name}\0`)
      .update(await readFile(path.join(h.dir, name)))
      .update('\0');
  return {
    dir: h.dir,
    files: picked.map((n) => path.join(h.dir, n)),
    holds: { heldoutTasks: h.dir, tasks: picked.length, sha256: digest.digest('hex') },
  };
}

/** The run options that hand every evaluation the endpoint playing the users (USER_ENDPOINT). */
export function userRunArgs(s: MeasureSettings): string[] {
  if (!s.user) return [];
  return [
    ...['--user-endpoint', s.user.endpoint, '--user-model', s.user.model],
    ...(s.user.apiKeyEnv ? ['--user-api-key-env', s.user.apiKeyEnv] : []),
  ];
}

/**
 * Per-task outcomes of one evaluation run of `policy` on `tasks` (`rehearse run ... --json`, with
 * `runArgs`; the folder, or its `files` when picked), and its report's figures, once (a cached step
 * of `work`). `trained`: the key of the training run that made `policy`, when one did (its folder's
 * path stays the same when its settings change).
 */
export function evaluateOn(
  step: { work: string; log: ProgressLog; tasks: EvalTasks },
  name: string,
  policy: string,
  runArgs: string[] = [],
  trained?: string,
): Promise<Evaluation> {
  const { work, log, tasks } = step;
  const key = stepKey({ tasks: tasks.holds, policy, runArgs, trained });
  return cachedStep(work, { name, key }, log, async () => {
    const out = await rehearse(
      ...['run', ...(tasks.files ?? [tasks.dir]), '--policy', policy],
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

/**
 * {@link evaluateOn} measure:envace's held-out tasks: the generated ones, or HELDOUT_TASKS's; the
 * users played by USER_ENDPOINT when it is set.
 */
export async function evaluate(
  ctx: MeasureContext,
  name: string,
  policy: string,
  runArgs: string[] = [],
  trained?: string,
): Promise<Evaluation> {
  const s = ctx.settings;
  const tasks = s.heldoutTasks
    ? await heldoutTaskFiles(s.heldoutTasks)
    : { dir: path.join(s.work, 'tasks/heldout'), holds: heldoutTasksOf(s) };
  const args = [...runArgs, ...userRunArgs(s)];
  return evaluateOn({ work: s.work, log: ctx.log, tasks }, name, policy, args, trained);
}

/** Where the held-out tasks come from, in words (the log, results.md). */
export function heldoutSourceText(s: MeasureSettings): string {
  const user = s.user ? `; users played by ${s.user.model} at ${s.user.endpoint}` : '';
  if (!s.heldoutTasks)
    return `generated, test-split seeds from ${HELDOUT_START}, ${s.heldout} per domain (${DOMAINS.join(', ')})${user}`;
  const { dir, first } = s.heldoutTasks;
  return `${first === undefined ? 'every' : `the first ${first}`} task file(s) of ${shown(dir)} (HELDOUT_TASKS)${user}`;
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
