import type { Fidelity } from './fidelity';
import type { Difference } from './stats';

// The effects file: what docs/envace-effects.json holds (`--publish`), as results.json's `effects`.

/** One trained arm's GRPO compute, summed over the training seeds. */
export interface ArmCompute {
  /** Optimizer steps whose mini-batch held act tokens (the trainer's `act_updates`). */
  actUpdates: number;
  /** The act tokens those steps trained (a token trained in two PPO epochs counts twice). */
  actTokens: number;
  /** Optimizer steps in all. */
  steps: number;
  /** Rollout episodes played. */
  episodes: number;
  realToolCalls: number;
  /** Share of the rollout episodes that ended on a rehearsal that did not parse (real: 0). */
  imaginedParseFailRate: number;
}

/** What the effects file (docs/envace-effects.json with `--publish`) holds. */
export interface Effects {
  seeds: number[];
  privateRehearsalSeeds: number[];
  heldOutTasks: number;
  /** The trained arms' dose: `tasks` a GRPO iteration (new ones each iteration) × `episodes`. */
  grpo: {
    iterations: number;
    tasks: number;
    newTasksEachIteration: boolean;
    episodes: number;
    miniBatchEpisodes: number;
    miniBatchUnit: 'episode';
    lossAgg: 'role-token-mean';
    ppoEpochs: number;
    lr: number;
  };
  compute: Record<'imagined' | 'real', ArmCompute>;
  /** BASE on the same GRPO-range tasks, imagined and real, graded by trajectory items. */
  imaginedSuccess: number;
  realSuccess: number;
  /** Spearman's correlation of those tasks' mean rewards imagined and real; null when undefined. */
  imaginedRealRankCorr: number | null;
  fidelity: Omit<Fidelity, 'perTask' | 'imaginedSuccess' | 'realSuccess' | 'imaginedRealRankCorr'>;
  differences: Difference[];
}

/** The effects file's fields measure:foresight writes (beside its differences, which carry a `family`). */
export const FORESIGHT_FIELDS = ['worldModelRuleAccuracy', 'actRuleAccuracy', 'foresight'];

type EffectsObject = Record<string, unknown>;

const differencesOf = (e: EffectsObject): { family?: unknown }[] =>
  Array.isArray(e['differences']) ? (e['differences'] as { family?: unknown }[]) : [];
const hasFamily = (d: { family?: unknown }) => typeof d.family === 'string';

/**
 * The effects file both measure recipes publish into (docs/envace-effects.json): `update` is one
 * recipe's part; the other's part of `existing` is kept. measure:foresight owns
 * {@link FORESIGHT_FIELDS} and the differences with a `family`; measure:envace the rest.
 */
export function mergedEffects(
  existing: EffectsObject | undefined,
  update: EffectsObject,
  writer: 'envace' | 'foresight',
): EffectsObject {
  const old = existing ?? {};
  const foresight = writer === 'foresight';
  const kept = Object.fromEntries(
    Object.entries(old).filter(
      ([k]) => k !== 'differences' && FORESIGHT_FIELDS.includes(k) !== foresight,
    ),
  );
  const keptDifferences = differencesOf(old).filter((d) => hasFamily(d) !== foresight);
  const ordered = foresight
    ? [...keptDifferences, ...differencesOf(update)]
    : [...differencesOf(update), ...keptDifferences];
  return foresight
    ? { ...kept, ...update, differences: ordered }
    : { ...update, ...kept, differences: ordered };
}
