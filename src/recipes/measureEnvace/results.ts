import * as path from 'node:path';
import { ROOT } from '../shared/studio';
import type { ArmRun } from '../trainDefault/grpoArm';
import type { MeasureContext } from './arms';
import { heldoutSourceText } from './arms';
import type { Measured } from './effects';
import type { ArmCompute, Effects } from './effectsFile';
import type { Fidelity } from './fidelity';
import { TABLE_HEADER, computeTable, differenceTable, fidelityLines, summaryRow } from './report';
import { DOMAINS, GRPO_START, HELDOUT_START } from './settings';
import type { Difference } from './stats';
import { isCount, summarise, wellFormedDifference, within } from './stats';

type Steps = Record<string, ArmRun>;

/** One arm's GRPO compute summed over its runs (each seed's), as the effects file reports it. */
export function grpoCompute(runs: readonly ArmRun[]): ArmCompute {
  const sum = (key: keyof ArmRun) => runs.reduce((a, r) => a + Number(r[key] ?? 0), 0);
  const episodes = sum('episodes');
  return {
    actUpdates: sum('actUpdates'),
    actTokens: sum('actTokens'),
    steps: sum('steps'),
    episodes,
    realToolCalls: sum('realToolCalls'),
    imaginedParseFailRate: episodes ? sum('unparsableRehearsalEnds') / episodes : 0,
  };
}

/** Each arm's GRPO compute over all seeds. */
function compute(ctx: MeasureContext, grpoSteps: Steps): Effects['compute'] {
  const of = (arm: string) =>
    grpoCompute(ctx.settings.seeds.flatMap((seed) => grpoSteps[`${arm}-seed${seed}`] ?? []));
  return { imagined: of('imagined'), real: of('real') };
}

/** results.json: the settings, every GRPO step, the effects and every arm's summary. */
export function resultsJson(
  ctx: MeasureContext,
  m: Measured,
  grpoSteps: Steps,
  fidelity: Fidelity,
  differences: Difference[],
) {
  const s = ctx.settings;
  const episodes = s.episodes ?? ctx.recipe.grpo.episodes;
  const { perTask, imaginedSuccess, realSuccess, imaginedRealRankCorr, ...others } = fidelity;
  const {
    seconds: _seconds,
    key: _key,
    ...fidelityFigures
  } = others as typeof others & {
    seconds?: number;
    key?: string;
  };
  const effects: Effects = {
    seeds: s.seeds,
    privateRehearsalSeeds: s.budgets.length ? s.privateSeeds : [],
    heldOutTasks: s.heldoutTasks
      ? new Set(m.none.tasks.map((t) => t.task)).size
      : s.heldout * DOMAINS.length,
    grpo: {
      iterations: s.iterations,
      tasks: s.grpoTasks * DOMAINS.length,
      newTasksEachIteration: true,
      episodes,
      miniBatchEpisodes: s.miniBatchEpisodes,
      miniBatchUnit: 'episode',
      lossAgg: 'role-token-mean',
      ppoEpochs: s.ppoEpochs,
      lr: s.lr,
    },
    compute: compute(ctx, grpoSteps),
    imaginedSuccess,
    realSuccess,
    imaginedRealRankCorr,
    fidelity: fidelityFigures,
    differences,
  };
  return {
    base: s.base,
    policy: s.policy,
    seeds: s.seeds,
    iterations: s.iterations,
    episodes,
    grpoTasksPerDomain: s.grpoTasks,
    heldoutPerDomain: s.heldoutTasks ? null : s.heldout,
    heldoutSource: s.heldoutTasks
      ? { kind: 'folder', ...s.heldoutTasks }
      : { kind: 'generated', domains: DOMAINS, split: 'test', start: HELDOUT_START },
    user: s.user ? { endpoint: s.user.endpoint, model: s.user.model } : null,
    grpo: grpoSteps,
    effects,
    fidelityPerTask: perTask,
    policyLearning: {
      none: summarise([m.none]),
      imagined: summarise(m.arms.imagined),
      real: summarise(m.arms.real),
    },
    recipeGrpo:
      m.recipeStart && s.recipeStart && m.budget0
        ? {
            start: s.recipeStart,
            startSummary: summarise([m.recipeStart]),
            policy: summarise([m.budget0]),
          }
        : null,
    privateRehearsal: [
      ...(m.budget0 ? [{ budget: 0, order: 'none', summary: summarise([m.budget0]) }] : []),
      ...m.privateRuns.map(({ budget, order, evaluations }) => ({
        budget,
        order,
        summary: summarise(evaluations),
      })),
    ],
  };
}

/** Section B's lines, when private rehearsal was measured (BUDGETS not empty). */
function privateSection(ctx: MeasureContext, m: Measured): string[] {
  const s = ctx.settings;
  if (!m.budget0 || !m.privateRuns.length) return [];
  return [
    `### B. Private rehearsal at test time (${path.relative(ROOT, s.policy)}; imagined episodes at temperature ${s.rehearsalTemperature}, seeds ${s.privateSeeds.join(', ')}; budget 0 is greedy)`,
    '',
    TABLE_HEADER,
    summaryRow('budget 0 (shadow)', summarise([m.budget0])),
    ...m.privateRuns.map((p) =>
      summaryRow(`budget ${p.budget}, ${p.order}`, summarise(p.evaluations)),
    ),
    '',
  ];
}

/** Section C's lines, when the committed policy's own GRPO start was measured. */
function recipeSection(ctx: MeasureContext, m: Measured): string[] {
  const s = ctx.settings;
  if (!m.recipeStart || !s.recipeStart || !m.budget0) return [];
  const iterations = (ctx.recipe.grpo.grpo?.iterations as number | undefined) ?? '?';
  return [
    `### C. The committed policy's own GRPO (${iterations} iterations of imagined rollouts at the recipe's scale, one training seed, the best validated point) vs where it started`,
    '',
    TABLE_HEADER,
    summaryRow(`SFT (${path.relative(ROOT, s.base)})`, summarise([m.none])),
    summaryRow(`GRPO's start (${path.relative(ROOT, s.recipeStart)})`, summarise([m.recipeStart])),
    summaryRow(`committed policy (${path.relative(ROOT, s.policy)})`, summarise([m.budget0])),
    '',
  ];
}

/** results.md: the tables of A, B and C, imagination's fidelity, and the paired differences. */
export function resultsMarkdown(
  ctx: MeasureContext,
  m: Measured,
  effects: Effects,
  minutes: number,
): string {
  const s = ctx.settings;
  const { grpo } = effects;
  return [
    `### A. GRPO with world rehearsal vs real rollouts vs none, at equal act updates (${s.iterations} iterations, each on ${grpo.tasks} new tasks × ${grpo.episodes} episodes; mini-batches of ${grpo.miniBatchEpisodes} episodes × ${grpo.ppoEpochs} epochs, each role's token-mean, lr ${grpo.lr}; seeds ${s.seeds.join(', ')}; ${effects.heldOutTasks} held-out tasks)`,
    '',
    TABLE_HEADER,
    summaryRow('no GRPO (base)', summarise([m.none])),
    summaryRow('GRPO, imagined rollouts (world rehearsal)', summarise(m.arms.imagined)),
    summaryRow('GRPO, real tool rollouts (baseline)', summarise(m.arms.real)),
    '',
    ...computeTable(effects.compute),
    '',
    ...fidelityLines(effects, path.relative(ROOT, s.base)),
    '',
    ...privateSection(ctx, m),
    ...recipeSection(ctx, m),
    ...differenceTable(effects.differences),
    '',
    `Held-out tasks: ${heldoutSourceText(s)}; GRPO tasks: train-split seeds from ${GRPO_START}; intervals: bootstrap over tasks (each task's value averaged over seeds). ${minutes.toFixed(1)} min this run.`,
  ].join('\n');
}

/**
 * What is wrong with an effects file, in words (nothing: an empty list): the fields every reader of
 * docs/envace-effects.json relies on, each of its type and in its range. It checks form, never a
 * model's values.
 */
export function effectsProblems(e: Effects): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) problems.push(what);
  };
  const count = isCount;
  check(Array.isArray(e.seeds) && e.seeds.length > 0 && e.seeds.every(count), 'seeds');
  check(count(e.heldOutTasks) && e.heldOutTasks > 0, 'heldOutTasks');
  for (const arm of ['imagined', 'real'] as const) {
    const c = e.compute?.[arm];
    check(!!c && count(c.actUpdates) && c.actUpdates > 0, `compute.${arm}.actUpdates`);
    check(
      !!c && count(c.actTokens) && c.actTokens >= (c.actUpdates ?? 0),
      `compute.${arm}.actTokens`,
    );
    check(!!c && count(c.steps) && c.steps >= (c.actUpdates ?? 0), `compute.${arm}.steps`);
    check(!!c && count(c.episodes) && c.episodes > 0, `compute.${arm}.episodes`);
    check(!!c && count(c.realToolCalls), `compute.${arm}.realToolCalls`);
    check(!!c && within(c.imaginedParseFailRate, 0, 1), `compute.${arm}.imaginedParseFailRate`);
  }
  check(e.compute?.imagined?.realToolCalls === 0, 'compute.imagined.realToolCalls is 0');
  check(e.compute?.real?.imaginedParseFailRate === 0, 'compute.real.imaginedParseFailRate is 0');
  check(within(e.imaginedSuccess, 0, 1), 'imaginedSuccess');
  check(within(e.realSuccess, 0, 1), 'realSuccess');
  check(
    e.imaginedRealRankCorr === null || within(e.imaginedRealRankCorr, -1, 1),
    'imaginedRealRankCorr',
  );
  for (const name of ['imagined-vs-none', 'real-vs-none', 'imagined-vs-real'])
    for (const metric of ['success', 'reward'] as const) {
      const d = e.differences?.find((x) => x.name === name && x.metric === metric);
      check(wellFormedDifference(d), `differences ${name} ${metric}`);
    }
  return problems;
}
