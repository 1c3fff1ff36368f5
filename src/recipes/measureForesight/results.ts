import type { ArmRun } from '../trainDefault/grpoArm';
import type { ArmCompute } from '../measureEnvace/effectsFile';
import { grpoCompute } from '../measureEnvace/results';
import { TABLE_HEADER, differenceTable, summaryRow } from '../measureEnvace/report';
import type { Difference, Evaluation } from '../measureEnvace/stats';
import {
  difference,
  isCount,
  summarise,
  wellFormedDifference,
  within,
} from '../measureEnvace/stats';
import type { FlipCount } from './memories';
import type { ForesightSettings } from './settings';
import {
  BUDGET,
  FORESIGHT_GRPO_START,
  FORESIGHT_HELDOUT_START,
  FORESIGHT_TRAIN_START,
} from './settings';
import type { InventedIds, RuleAccuracy } from './traces';

/** The families a difference is measured on. */
export type Family = 'bank-foresight' | 'bank-foresight-twin' | 'builtin';

/** A paired difference on one family's held-out tasks. */
export interface FamilyDifference extends Difference {
  family: Family;
}

/** One policy's private-rehearsal evaluations: every order's, one a private seed. */
export type PrivateRuns = Record<string, Evaluation[]>;

/** Every evaluation the differences are made of. */
export interface ForesightMeasured {
  foresight: { budget0: Evaluation; budget2: PrivateRuns };
  twin: { budget0: Evaluation; budget2: PrivateRuns };
  /** The foresight SFT after imagined GRPO, at budget 0, one a training seed. */
  imagined: Evaluation[];
  builtin: { budget0: Evaluation; budget2: PrivateRuns };
}

/**
 * The paired differences, for success and reward: budget 2 (sequential; `-parallel-` for the other
 * order) vs budget 0 on each family with its own policy, and imagined GRPO vs none on the foresight
 * family, each with its family.
 */
export function foresightDifferences(m: ForesightMeasured): FamilyDifference[] {
  const found: FamilyDifference[] = [];
  const budgets = (name: string, family: Family, arm: ForesightMeasured['foresight']) => {
    for (const metric of ['success', 'reward'] as const)
      for (const [order, runs] of Object.entries(arm.budget2)) {
        const label = order === 'sequential' ? '' : `-${order}`;
        found.push({
          ...difference(`${name}-budget${BUDGET}${label}-vs-budget0`, metric, runs, [arm.budget0]),
          family,
        });
      }
  };
  budgets('foresight', 'bank-foresight', m.foresight);
  budgets('twin', 'bank-foresight-twin', m.twin);
  for (const metric of ['success', 'reward'] as const)
    found.push({
      ...difference('foresight-imagined-vs-none', metric, m.imagined, [m.foresight.budget0]),
      family: 'bank-foresight',
    });
  budgets('builtin', 'builtin', m.builtin);
  return found;
}

/** What measure:foresight publishes into the effects file (docs/envace-effects.json). */
export interface ForesightEffects {
  /** The foresight SFT's rehearse role on held-out logged transfers: its verdict vs the real one. */
  worldModelRuleAccuracy: number;
  /**
   * The foresight SFT's act at budget 0 on the held-out tasks: its choice (transfer, refusal or
   * neither) against the verdict.
   */
  actRuleAccuracy: number;
  foresight: {
    seeds: number[];
    privateRehearsalSeeds: number[];
    budget: number;
    memory: 'outcomes';
    heldOutTasks: Record<Family, number>;
    data: {
      demonstrations: number;
      twinDemonstrations: number;
      loggedRows: number;
      memoryRows: number;
      /** The share of memory-reading rows whose memory says the opposite of the truth, measured. */
      flipRate: number;
      builtinRows: number;
    };
    sft: { steps: number; batch: number };
    grpo: {
      iterations: number;
      tasks: number;
      episodes: number;
      miniBatchEpisodes: number;
      ppoEpochs: number;
      lr: number;
      compute: ArmCompute;
    };
    worldModel: RuleAccuracy;
    act: Record<string, RuleAccuracy>;
    /** Calls on invented ids in the built-in comparison's committed episodes, by arm. */
    builtinInventedIds: Record<string, InventedIds>;
  };
  differences: FamilyDifference[];
}

/** The differences the issue names, each of which the effects file must hold. */
export const REQUIRED_DIFFERENCES: [string, Family][] = [
  ['foresight-budget2-vs-budget0', 'bank-foresight'],
  ['foresight-imagined-vs-none', 'bank-foresight'],
  ['twin-budget2-vs-budget0', 'bank-foresight-twin'],
  ['builtin-budget2-vs-budget0', 'builtin'],
];

/**
 * What is wrong with the foresight part of an effects file, in words (nothing: an empty list): the
 * fields every reader relies on, each of its type and in its range. It checks form, never a model's
 * values.
 */
export function foresightProblems(e: Partial<ForesightEffects>): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) problems.push(what);
  };
  const count = isCount;
  check(within(e.worldModelRuleAccuracy, 0, 1), 'worldModelRuleAccuracy');
  check(within(e.actRuleAccuracy, 0, 1), 'actRuleAccuracy');
  const f = e.foresight;
  check(!!f && Array.isArray(f.seeds) && f.seeds.length > 0, 'foresight.seeds');
  check(!!f && f.budget === BUDGET, 'foresight.budget');
  for (const family of ['bank-foresight', 'bank-foresight-twin', 'builtin'] as const)
    check(
      !!f && count(f.heldOutTasks?.[family]) && f.heldOutTasks[family] > 0,
      `foresight.heldOutTasks.${family}`,
    );
  check(!!f && within(f.data?.flipRate, 0, 0.5), 'foresight.data.flipRate');
  check(!!f && count(f.data?.memoryRows) && f.data.memoryRows > 0, 'foresight.data.memoryRows');
  check(!!f && count(f.data?.loggedRows) && f.data.loggedRows > 0, 'foresight.data.loggedRows');
  check(
    !!f && count(f.grpo?.compute?.actUpdates) && f.grpo.compute.actUpdates > 0,
    'foresight.grpo.compute.actUpdates',
  );
  check(!!f && f.grpo?.compute?.realToolCalls === 0, 'foresight.grpo.compute.realToolCalls is 0');
  check(!!f && count(f.worldModel?.n) && f.worldModel.n > 0, 'foresight.worldModel.n');
  for (const [name, family] of REQUIRED_DIFFERENCES)
    for (const metric of ['success', 'reward'] as const) {
      const d = e.differences?.find((x) => x.name === name && x.metric === metric);
      check(d?.family === family && wellFormedDifference(d), `differences ${name} ${metric}`);
    }
  return problems;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The rows of one policy's budget 0 and private-rehearsal evaluations. */
function budgetRows(name: string, arm: ForesightMeasured['foresight']): string[] {
  return [
    summaryRow(`${name}, budget 0 (shadow)`, summarise([arm.budget0])),
    ...Object.entries(arm.budget2).map(([order, runs]) =>
      summaryRow(`${name}, budget ${BUDGET} ${order}`, summarise(runs)),
    ),
  ];
}

/** results.md: the evaluations, the rule accuracies, the data, and the paired differences. */
export function foresightMarkdown(
  s: ForesightSettings,
  m: ForesightMeasured,
  e: ForesightEffects,
  minutes: number,
): string {
  const f = e.foresight;
  const accuracy = (a: RuleAccuracy) =>
    `${pct(a.accuracy)} of ${a.n} (${Object.entries(a.counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')})`;
  const ids = Object.entries(f.builtinInventedIds).map(
    ([arm, x]) =>
      `| ${arm} | ${x.inventedCalls} of ${x.calls} | ${x.episodesWithInvented} of ${x.episodes} |`,
  );
  return [
    `### Foresight: private rehearsal with an outcomes memory the act was trained to read (budget ${BUDGET}, imagined attempts at temperature ${s.rehearsalTemperature}, seeds ${s.privateSeeds.join(', ')}; budget 0 is greedy)`,
    '',
    TABLE_HEADER,
    ...budgetRows('foresight SFT on bank-foresight', m.foresight),
    summaryRow('foresight SFT + imagined GRPO, budget 0', summarise(m.imagined)),
    ...budgetRows('twin SFT on bank-foresight-twin', m.twin),
    ...budgetRows('foresight SFT on the built-in families', m.builtin),
    '',
    `Rule accuracy on held-out tasks: the world model (the foresight SFT's rehearse role on ${f.worldModel.n} logged transfers, replayed) ${accuracy(f.worldModel)}; the act at budget 0 ${accuracy(f.act['foresight-budget0'])}.`,
    '',
    ...Object.entries(f.act).map(([arm, a]) => `- act's rule accuracy, ${arm}: ${accuracy(a)}`),
    '',
    'Calls on invented ids in the built-in comparison (committed episodes):',
    '',
    '| arm | calls on an invented id | episodes with one |',
    '| --- | --- | --- |',
    ...ids,
    '',
    `Data: ${f.data.demonstrations} foresight and ${f.data.twinDemonstrations} twin demonstration rows, ${f.data.loggedRows} logged rehearse rows, ${f.data.memoryRows} memory-reading rows (${pct(f.data.flipRate)} flipped), ${f.data.builtinRows} built-in rows; SFT ${f.sft.steps} steps of ${f.sft.batch} rows from ${s.base}. GRPO: ${f.grpo.iterations} iterations of ${f.grpo.tasks} new tasks × ${f.grpo.episodes} episodes, ${f.grpo.compute.actUpdates} act updates of ${f.grpo.compute.steps} steps, ${pct(f.grpo.compute.imaginedParseFailRate)} of rollouts ended by an unparsable rehearsal.`,
    '',
    ...differenceTable(e.differences),
    '',
    `Seeds: train split from ${FORESIGHT_TRAIN_START} (demonstrations, memory-reading tasks, logged calls, built-in demonstrations), GRPO from ${FORESIGHT_GRPO_START}, held-out test split from ${FORESIGHT_HELDOUT_START} (built-in: measure:envace's). ${minutes.toFixed(1)} min this run.`,
  ].join('\n');
}

/** The effects part from what was measured. */
export function foresightEffects(
  s: ForesightSettings,
  m: ForesightMeasured,
  parts: {
    rows: { demonstrations: number; twin: number; logged: number; memory: number; builtin: number };
    flip: FlipCount;
    grpo: ArmRun[];
    episodes: number;
    worldModel: RuleAccuracy;
    act: Record<string, RuleAccuracy>;
    inventedIds: Record<string, InventedIds>;
  },
): ForesightEffects {
  const tasks = (x: Evaluation) => x.tasks.length;
  return {
    worldModelRuleAccuracy: parts.worldModel.accuracy,
    actRuleAccuracy: parts.act['foresight-budget0'].accuracy,
    foresight: {
      seeds: s.seeds,
      privateRehearsalSeeds: s.privateSeeds,
      budget: BUDGET,
      memory: 'outcomes',
      heldOutTasks: {
        'bank-foresight': tasks(m.foresight.budget0),
        'bank-foresight-twin': tasks(m.twin.budget0),
        builtin: tasks(m.builtin.budget0),
      },
      data: {
        demonstrations: parts.rows.demonstrations,
        twinDemonstrations: parts.rows.twin,
        loggedRows: parts.rows.logged,
        memoryRows: parts.rows.memory,
        flipRate: parts.flip.rate,
        builtinRows: parts.rows.builtin,
      },
      sft: { steps: s.sftSteps, batch: s.sftBatch },
      grpo: {
        iterations: s.iterations,
        tasks: s.grpoTasks,
        episodes: parts.episodes,
        miniBatchEpisodes: s.miniBatchEpisodes,
        ppoEpochs: s.ppoEpochs,
        lr: s.lr,
        compute: grpoCompute(parts.grpo),
      },
      worldModel: parts.worldModel,
      act: parts.act,
      builtinInventedIds: parts.inventedIds,
    },
    differences: foresightDifferences(m),
  };
}
