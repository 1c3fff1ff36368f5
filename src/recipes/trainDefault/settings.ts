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
}

/** The stages `--until` may name, in order (memories and sft-memory only with recipe.memory). */
export const STAGES = [
  'tasks',
  'demonstrations',
  'tokenizer',
  'init',
  'sft',
  'memories',
  'sft-memory',
  'grpo',
  'model',
  'eval',
] as const;

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
  return {
    recipeFile: fromEnv(env.RECIPE, root, 'training/default/recipe.json'),
    work: fromEnv(env.WORK, root, '.rehearsal/training/default'),
    model: fromEnv(env.MODEL, root, 'models/default'),
    fresh: argv.includes('--fresh'),
    ...(until ? { until } : {}),
  };
}
