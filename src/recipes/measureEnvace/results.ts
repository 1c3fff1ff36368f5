import * as path from 'node:path';
import { ROOT } from '../shared/studio';
import type { MeasureContext } from './arms';
import type { Measured } from './effects';
import { TABLE_HEADER, differenceTable, summaryRow } from './report';
import { DOMAINS, GRPO_START, HELDOUT_START } from './settings';
import type { Difference } from './stats';
import { summarise } from './stats';

/** What the effects file (docs/envace-effects.json with `--publish`) holds. */
export interface Effects {
  seeds: number[];
  privateRehearsalSeeds: number[];
  heldOutTasks: number;
  grpo: { iterations: number; tasks: number; episodes: number };
  compute: Record<'imagined' | 'real', { episodes: number; realToolCalls: number }>;
  differences: Difference[];
}

type Steps = Record<string, Record<string, unknown>>;

/** Each arm's GRPO compute over all seeds: episodes played, real tool calls made. */
function compute(ctx: MeasureContext, grpoSteps: Steps): Effects['compute'] {
  const sum = (arm: string, key: string) =>
    ctx.settings.seeds.reduce(
      (a, seed) => a + Number(grpoSteps[`${arm}-seed${seed}`]?.[key] ?? 0),
      0,
    );
  const of = (arm: string) => ({
    episodes: sum(arm, 'episodes'),
    realToolCalls: sum(arm, 'realToolCalls'),
  });
  return { imagined: of('imagined'), real: of('real') };
}

/** results.json: the settings, every GRPO step, the effects and every arm's summary. */
export function resultsJson(
  ctx: MeasureContext,
  m: Measured,
  grpoSteps: Steps,
  differences: Difference[],
) {
  const s = ctx.settings;
  const episodes = s.episodes ?? ctx.recipe.grpo.episodes;
  const effects: Effects = {
    seeds: s.seeds,
    privateRehearsalSeeds: s.privateSeeds,
    heldOutTasks: s.heldout * DOMAINS.length,
    grpo: { iterations: s.iterations, tasks: s.grpoTasks * DOMAINS.length, episodes },
    compute: compute(ctx, grpoSteps),
    differences,
  };
  return {
    base: s.base,
    policy: s.policy,
    seeds: s.seeds,
    iterations: s.iterations,
    episodes,
    grpoTasksPerDomain: s.grpoTasks,
    heldoutPerDomain: s.heldout,
    grpo: grpoSteps,
    effects,
    policyLearning: {
      none: summarise([m.none]),
      imagined: summarise(m.arms.imagined),
      real: summarise(m.arms.real),
    },
    recipeGrpo:
      m.recipeStart && s.recipeStart
        ? {
            start: s.recipeStart,
            startSummary: summarise([m.recipeStart]),
            policy: summarise([m.budget0]),
          }
        : null,
    privateRehearsal: [
      { budget: 0, order: 'none', summary: summarise([m.budget0]) },
      ...m.privateRuns.map(({ budget, order, evaluations }) => ({
        budget,
        order,
        summary: summarise(evaluations),
      })),
    ],
  };
}

/** Section C's lines, when the committed policy's own GRPO start was measured. */
function recipeSection(ctx: MeasureContext, m: Measured): string[] {
  const s = ctx.settings;
  if (!m.recipeStart || !s.recipeStart) return [];
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

/** results.md: the tables of A, B and C, and the paired differences. */
export function resultsMarkdown(
  ctx: MeasureContext,
  m: Measured,
  effects: Effects,
  minutes: number,
): string {
  const s = ctx.settings;
  const { compute: c, grpo } = effects;
  return [
    `### A. GRPO with world rehearsal vs real rollouts vs none (${s.iterations} iterations, ${s.grpoTasks * 2} tasks × ${grpo.episodes} episodes, seeds ${s.seeds.join(', ')}; ${s.heldout * 2} held-out tasks)`,
    '',
    TABLE_HEADER,
    summaryRow('no GRPO (base)', summarise([m.none])),
    summaryRow('GRPO, imagined rollouts (world rehearsal)', summarise(m.arms.imagined)),
    summaryRow('GRPO, real tool rollouts (baseline)', summarise(m.arms.real)),
    '',
    `GRPO compute per arm (all seeds): imagined ${c.imagined.episodes} episodes, ${c.imagined.realToolCalls} real tool calls; real ${c.real.episodes} episodes, ${c.real.realToolCalls} real tool calls.`,
    '',
    `### B. Private rehearsal at test time (${path.relative(ROOT, s.policy)}; imagined episodes at temperature ${s.rehearsalTemperature}, seeds ${s.privateSeeds.join(', ')}; budget 0 is greedy)`,
    '',
    TABLE_HEADER,
    summaryRow('budget 0 (shadow)', summarise([m.budget0])),
    ...m.privateRuns.map((p) =>
      summaryRow(`budget ${p.budget}, ${p.order}`, summarise(p.evaluations)),
    ),
    '',
    ...recipeSection(ctx, m),
    ...differenceTable(effects.differences),
    '',
    `Held-out tasks: test-split seeds from ${HELDOUT_START}; GRPO tasks: train-split seeds from ${GRPO_START}; intervals: bootstrap over tasks (each task's value averaged over seeds). ${minutes.toFixed(1)} min this run.`,
  ].join('\n');
}
