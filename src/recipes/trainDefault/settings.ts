import * as path from 'node:path';

/** A JSON object of trainer settings, passed on as it is. */
export type JsonObject = Record<string, unknown>;

/** training/default/recipe.json: what `npm run train:default` builds, and how. */
export interface Recipe {
  description?: string;
  seed: number;
  domains: string[];
  tasks: { demonstrations: number; grpo: number; test: number; probe?: number };
  rehearsePrompt: unknown;
  maxTokens: unknown;
  identifierSlots?: boolean;
  /** False: the failed demonstrations are kept too (the GRPO sanity task's). */
  demonstrationsOnlySuccessful?: boolean;
  tokenizer: JsonObject;
  architecture: JsonObject;
  sft: SftRecipe;
  memory?: MemoryRecipe;
  grpo: GrpoRecipe;
  /** GRPO on real rollouts after the imagined GRPO (the arm measure:envace found best). */
  realGrpo?: RealGrpoRecipe;
}

/**
 * The real-rollout GRPO stage: measure:envace's real arm at its dose (docs/envace-effects.json),
 * from the imagined GRPO's policy, with the recipe's GRPO settings and seed. Its tasks are train-split
 * seeds from `start` (no other stage of the recipe uses them), `tasksPerIteration` new ones each
 * iteration (half from each domain); each optimizer step takes `miniBatchEpisodes` episodes.
 */
export interface RealGrpoRecipe {
  start: number;
  tasksPerDomain: number;
  tasksPerIteration: number;
  iterations: number;
  miniBatchEpisodes: number;
  ppoEpochs: number;
  lr: number;
}

/** The SFT stage: hardware, the copy probe, and the trainer's own settings. */
export interface SftRecipe {
  threads?: number;
  processes?: number;
  probe?: JsonObject;
  train?: JsonObject;
  data?: JsonObject;
  [setting: string]: unknown;
}

/** Private rehearsal by the SFT policy, and the SFT that continues on its memories. */
export interface MemoryRecipe {
  tasks: number;
  budget: number;
  order: string;
  temperature: number;
  sft: { train?: JsonObject; [setting: string]: unknown };
}

/** The GRPO stage: rollouts, validation, batches, and the trainer's own settings. */
export interface GrpoRecipe {
  threads?: number;
  episodes: number;
  temperature: number;
  actRows?: string;
  validation?: { tasks: number; every: number };
  tasksPerIteration?: number;
  /**
   * Grounded imagination, as EnvACE grounds its simulator in a sample's reference: true, the GRPO
   * tasks go through `rehearse verify --examples-out` (each gets its reference's calls with their
   * real responses as examples) and the rollouts show up to {@link GROUNDED_MAX_EXAMPLES} of them in
   * the rehearse prompt (`rehearse rollout --max-examples`), so the world the policy imagines is the
   * one the task was drawn in. Held-out tasks (validation, test) never get examples: evaluation is
   * shadow mode, and rehearsal at test time has no reference. Default false.
   */
  groundedImagination?: boolean;
  train?: JsonObject;
  grpo?: JsonObject;
  [setting: string]: unknown;
}

/**
 * The examples a grounded rollout's rehearse prompt shows (the called tool's first): every reference
 * call of the built-in domains' tasks (2 to 6 on 100 train-split tasks), as EnvACE shows them all.
 * With the default policy's tokenizer, examples and call come to at most 1,224 tokens there (median
 * 442), within GRPO's max_length of 3,072 beside 1,200 bytes of history and a 640-token rehearsal.
 */
export const GROUNDED_MAX_EXAMPLES = 8;

/** The rollout command's flags for a recipe's GRPO: `--max-examples` when its imagination is grounded. */
export function groundedRolloutArgs(grpo: GrpoRecipe): string[] {
  return grpo.groundedImagination ? ['--max-examples', String(GROUNDED_MAX_EXAMPLES)] : [];
}

/** Where train:default reads and writes, and how far it goes. */
export interface TrainDefaultSettings {
  /** The recipe file (`RECIPE`; default training/default/recipe.json). */
  recipeFile: string;
  /** The work folder (`WORK`; default .rehearsal/training/default), gitignored. */
  work: string;
  /** The policy folder written at the end (`MODEL`; default models/default). */
  model: string;
  /** `--fresh`: the work folder is removed first. */
  fresh: boolean;
  /** `--until <stage>`: stop after that stage (tasks, demonstrations, tokenizer, init, sft, ...). */
  until?: string;
  /**
   * `--from <stage>` with `START=<policy folder>`: the training stages before it are taken from
   * that policy (a published one, its manifest recording how they were made) instead of being run;
   * the data stages (tasks, demonstrations) still run. Only a stage that starts from a policy.
   */
  from?: FromStage;
  /** `START`: the policy the stage `--from` names starts from. */
  start?: string;
}

/** The stages `--from` may name: those that continue a trained policy. */
export const FROM_STAGES = ['grpo', 'grpo-real'] as const;
export type FromStage = (typeof FROM_STAGES)[number];

/**
 * The stages `--until` may name, in order (memories and sft-memory only with recipe.memory,
 * grpo-real only with recipe.realGrpo).
 */
export const STAGES = [
  'tasks',
  'demonstrations',
  'tokenizer',
  'init',
  'sft',
  'memories',
  'sft-memory',
  'grpo',
  'grpo-real',
  'model',
  'eval',
] as const;
export type Stage = (typeof STAGES)[number];

/** A path from the environment (relative to the current folder), else `fallback` in the studio. */
export function fromEnv(value: string | undefined, root: string, fallback: string): string {
  return value ? path.resolve(value) : path.join(root, fallback);
}

/** The settings of a train:default run from its environment (RECIPE, WORK, MODEL) and arguments. */
export function trainDefaultSettings(
  env: Record<string, string | undefined>,
  argv: readonly string[],
  root: string,
): TrainDefaultSettings {
  const at = argv.indexOf('--until');
  const until = at >= 0 ? argv[at + 1] : undefined;
  if (at >= 0 && !(STAGES as readonly string[]).includes(until ?? ''))
    throw new Error(`--until takes one of ${STAGES.join(', ')}; got ${until ?? 'nothing'}.`);
  const fromAt = argv.indexOf('--from');
  const from = fromAt >= 0 ? argv[fromAt + 1] : undefined;
  if (fromAt >= 0 && !(FROM_STAGES as readonly string[]).includes(from ?? ''))
    throw new Error(`--from takes one of ${FROM_STAGES.join(', ')}; got ${from ?? 'nothing'}.`);
  if (from && !env.START)
    throw new Error(
      `--from ${from} needs START=<policy folder>: the policy that stage starts from (e.g. START=models/default).`,
    );
  if (from && until && STAGES.indexOf(until as Stage) < STAGES.indexOf(from as Stage))
    throw new Error(`--until ${until} comes before --from ${from}: nothing would run.`);
  if (env.START && !from)
    throw new Error(
      'START names the policy a --from stage starts from; add --from grpo or --from grpo-real.',
    );
  return {
    recipeFile: fromEnv(env.RECIPE, root, 'training/default/recipe.json'),
    work: fromEnv(env.WORK, root, '.rehearsal/training/default'),
    model: fromEnv(env.MODEL, root, 'models/default'),
    fresh: argv.includes('--fresh'),
    ...(until ? { until } : {}),
    ...(from && env.START ? { from: from as FromStage, start: path.resolve(env.START) } : {}),
  };
}
