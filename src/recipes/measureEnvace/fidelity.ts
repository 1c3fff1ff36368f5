import * as path from 'node:path';
import { removeTree } from '../shared/files';
import { cachedStep, stepKey } from '../shared/stages';
import { rehearse } from '../shared/studio';
import { groundTasks } from '../trainDefault/data';
import { groundedRolloutArgs } from '../trainDefault/settings';
import type { MeasureContext } from './arms';
import type { RolloutEpisode } from '../shared/rolloutTraces';
import {
  endedOnUnparsableRehearsal,
  rolloutEpisodes,
  trajectoryGrade,
} from '../shared/rolloutTraces';
import { DOMAINS, GRPO_START } from './settings';
import { spearman } from './stats';

/** The seed of the fidelity rollouts (the GRPO arms' rollouts sample with the trainer's). */
const FIDELITY_SEED = 0;

/** How one task went in imagination and in reality: its episodes' mean reward and success. */
export interface TaskFidelity {
  task: string;
  imagined: { reward: number; success: number; episodes: number };
  real: { reward: number; success: number; episodes: number };
}

/**
 * How faithful imagined rollouts are to real ones for the starting policy: the same tasks played
 * both ways, every episode graded by its trajectory items alone (an imagined episode has no state
 * to grade), so that imagined and real rewards are comparable.
 */
export interface Fidelity {
  /** Tasks both modes graded at least one episode of. */
  tasks: number;
  /** Episodes per task and mode. */
  episodesPerTask: number;
  /** Share of graded imagined episodes that succeeded. */
  imaginedSuccess: number;
  /** Share of graded real episodes that succeeded (graded as the imagined ones are). */
  realSuccess: number;
  /** Share of real episodes that succeeded as the runner grades them, on the real state too. */
  realSuccessOnState: number;
  imaginedReward: number;
  realReward: number;
  /** Spearman's correlation of the tasks' mean rewards imagined and real; null when undefined. */
  imaginedRealRankCorr: number | null;
  /** Share of imagined episodes that ended on a rehearsal that did not parse. */
  imaginedParseFailRate: number;
  perTask: TaskFidelity[];
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Each task's graded episodes: their rewards and successes (1 or 0). */
function byTask(episodes: readonly RolloutEpisode[]) {
  const tasks = new Map<string, { rewards: number[]; successes: number[] }>();
  for (const e of episodes) {
    const grade = trajectoryGrade(e);
    if (!grade) continue;
    const t = tasks.get(e.task) ?? { rewards: [], successes: [] };
    t.rewards.push(grade.reward);
    t.successes.push(grade.success ? 1 : 0);
    tasks.set(e.task, t);
  }
  return tasks;
}

/** The comparison of one policy's imagined and real episodes of the same tasks. */
export function compareImaginedReal(
  imagined: readonly RolloutEpisode[],
  real: readonly RolloutEpisode[],
  episodesPerTask: number,
): Fidelity {
  const im = byTask(imagined);
  const re = byTask(real);
  const perTask: TaskFidelity[] = [...im.keys()]
    .filter((task) => re.has(task))
    .sort()
    .map((task) => {
      const side = (t: { rewards: number[]; successes: number[] }) => ({
        reward: mean(t.rewards),
        success: mean(t.successes),
        episodes: t.rewards.length,
      });
      return { task, imagined: side(im.get(task)!), real: side(re.get(task)!) };
    });
  const all = (m: typeof im, field: 'rewards' | 'successes') =>
    mean([...m.values()].flatMap((t) => t[field]));
  return {
    tasks: perTask.length,
    episodesPerTask,
    imaginedSuccess: all(im, 'successes'),
    realSuccess: all(re, 'successes'),
    realSuccessOnState: mean(
      real.filter((e) => e.success !== null).map((e) => (e.success ? 1 : 0)),
    ),
    imaginedReward: all(im, 'rewards'),
    realReward: all(re, 'rewards'),
    imaginedRealRankCorr: spearman(
      perTask.map((t) => t.imagined.reward),
      perTask.map((t) => t.real.reward),
    ),
    imaginedParseFailRate: imagined.length
      ? imagined.filter(endedOnUnparsableRehearsal).length / imagined.length
      : 0,
    perTask,
  };
}

/** What the fidelity step's result depends on. */
function fidelityKey(ctx: MeasureContext) {
  const s = ctx.settings;
  return stepKey({
    tasks: { domains: DOMAINS, split: 'train', start: GRPO_START, perDomain: s.fidelityTasks },
    policy: s.base,
    episodes: s.fidelityEpisodes,
    temperature: ctx.recipe.grpo.temperature,
    seed: FIDELITY_SEED,
    grounded: !!ctx.recipe.grpo.groundedImagination,
  });
}

/**
 * BASE plays FIDELITY_TASKS GRPO-range tasks per domain (train split, the first GRPO tasks' seeds)
 * FIDELITY_EPISODES times each, imagined and real (`rehearse rollout` without and with `--real`, at
 * the GRPO rollouts' temperature), once; see {@link compareImaginedReal}.
 */
export function imaginedVersusReal(ctx: MeasureContext): Promise<Fidelity> {
  const s = ctx.settings;
  const dir = path.join(s.work, 'fidelity');
  return cachedStep(s.work, { name: 'fidelity', key: fidelityKey(ctx) }, ctx.log, async () => {
    await removeTree(dir);
    for (const domain of DOMAINS)
      await rehearse(
        ...['generate', domain, '--split', 'train', '--start', String(GRPO_START)],
        ...['--count', String(s.fidelityTasks), '--out', path.join(dir, 'tasks', domain)],
      );
    // Grounded imagination: the tasks with their reference's real responses, shown to the world model.
    const grounded = !!ctx.recipe.grpo.groundedImagination;
    if (grounded) await groundTasks(path.join(dir, 'tasks'), path.join(dir, 'tasks-grounded'));
    const tasks = path.join(dir, grounded ? 'tasks-grounded' : 'tasks');
    const played: Record<string, RolloutEpisode[]> = {};
    for (const mode of ['imagined', 'real'] as const) {
      await rehearse(
        ...['rollout', tasks, '--policy', s.base, ...groundedRolloutArgs(ctx.recipe.grpo)],
        ...['--out', path.join(dir, `${mode}.rows.jsonl`), '--runs', path.join(dir, mode)],
        ...['--episodes', String(s.fidelityEpisodes), '--seed', String(FIDELITY_SEED)],
        ...['--temperature', String(ctx.recipe.grpo.temperature), '--group', 'fidelity'],
        ...['--act-rows', 'episode', ...(mode === 'real' ? ['--real'] : [])],
      );
      played[mode] = (await rolloutEpisodes(path.join(dir, mode))).episodes;
      ctx.log(`  fidelity: ${played[mode].length} ${mode} episodes of BASE`);
    }
    return compareImaginedReal(played.imagined, played.real, s.fidelityEpisodes);
  });
}
