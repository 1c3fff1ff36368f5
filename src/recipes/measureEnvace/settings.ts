import * as path from 'node:path';
import { fromEnv } from '../trainDefault/settings';

/** What measure:envace compares, at what size (every field has its environment variable). */
export interface MeasureSettings {
  quick: boolean;
  /** `WORK`: .rehearsal/measure-envace (QUICK: measure-envace-quick). */
  work: string;
  /** `RECIPE`: the recipe whose GRPO settings every arm uses. */
  recipeFile: string;
  /** `POLICY`: the committed policy (B, C). */
  policy: string;
  /** `BASE`: where every GRPO arm starts (A): train:default's SFT when there, else POLICY. */
  base: string;
  /** `RECIPE_START`: where the committed policy's own GRPO started (C); none in QUICK. */
  recipeStart?: string;
  seeds: number[];
  /** `ITERATIONS`: GRPO iterations per arm and seed, each on new GRPO tasks. */
  iterations: number;
  /** `EPISODES`: default the recipe's own (recipe.grpo.episodes). */
  episodes?: number;
  /** `GRPO_TASKS`: GRPO tasks per domain and iteration (the tasks of every iteration are new). */
  grpoTasks: number;
  /** `MINI_BATCH`: episodes (with all their rows) per optimizer step. */
  miniBatchEpisodes: number;
  /** `PPO_EPOCHS`: passes over each iteration's episodes. */
  ppoEpochs: number;
  /** `LR`: the arms' constant learning rate. */
  lr: number;
  /** `HELDOUT`: held-out tasks per domain (generated ones; with HELDOUT_TASKS, see there). */
  heldout: number;
  /**
   * `HELDOUT_TASKS`: a folder of task files (e.g. `.rehearsal/imports/tau2-retail/tasks`) every
   * evaluation plays instead of the generated held-out tasks: its `*.task.json` files by name, the
   * first `HELDOUT` of them (`first`) when HELDOUT is set (QUICK: 1), else all.
   */
  heldoutTasks?: { dir: string; first?: number };
  /**
   * `USER_ENDPOINT`, `USER_MODEL`, `USER_API_KEY_ENV`: the endpoint that plays τ²'s user simulator in
   * every evaluation (`--user-endpoint`, `--user-model`, `--user-api-key-env`); without it a task's
   * τ² user is not asked and its episode ends after the opening.
   */
  user?: { endpoint: string; model: string; apiKeyEnv?: string };
  /** `FIDELITY_TASKS`: GRPO-range tasks per domain that BASE plays imagined and real. */
  fidelityTasks: number;
  /** `FIDELITY_EPISODES`: episodes per task and mode of that comparison. */
  fidelityEpisodes: number;
  /**
   * `GROUNDED` (1 or 0): whether imagined rollouts see their tasks' reference calls with the real
   * responses (`verify --examples-out`, `--max-examples`); unset, the recipe's grpo.groundedImagination.
   */
  grounded?: boolean;
  /** `BUDGETS`: private-rehearsal budgets of B; empty (`BUDGETS=`) skips B. */
  budgets: number[];
  privateSeeds: number[];
  rehearsalTemperature: number;
  fresh: boolean;
  publish: boolean;
}

/** Seeds no recipe of this repository uses: train:default takes the first train and test seeds. */
export const GRPO_START = 20_000;
export const HELDOUT_START = 30_000;
export const DOMAINS = ['retail', 'bank'];

const numbers = (text: string) => (text.trim() === '' ? [] : text.split(',').map(Number));

/** HELDOUT_TASKS's folder and how many of its tasks to play; none when it is unset. */
function heldoutTasksSetting(
  env: Record<string, string | undefined>,
  quick: boolean,
  argv: readonly string[],
): MeasureSettings['heldoutTasks'] {
  if (!env.HELDOUT_TASKS) return undefined;
  if (argv.includes('--publish'))
    throw new Error(
      'HELDOUT_TASKS does not go with --publish: docs/envace-effects.json holds the effects on the generated held-out tasks.',
    );
  const first = env.HELDOUT ?? (quick ? '1' : undefined);
  if (first !== undefined && !(Number.isInteger(Number(first)) && Number(first) > 0))
    throw new Error(
      `HELDOUT must be a whole number above 0 (tasks of HELDOUT_TASKS), not "${first}".`,
    );
  return { dir: path.resolve(env.HELDOUT_TASKS), ...(first ? { first: Number(first) } : {}) };
}

/** The endpoint USER_ENDPOINT and USER_MODEL name (USER_API_KEY_ENV: its key's variable), or none. */
function userSetting(env: Record<string, string | undefined>): MeasureSettings['user'] {
  if (!env.USER_ENDPOINT) {
    if (env.USER_MODEL || env.USER_API_KEY_ENV)
      throw new Error(
        'USER_MODEL and USER_API_KEY_ENV go with USER_ENDPOINT (the endpoint that plays the user).',
      );
    return undefined;
  }
  if (!env.USER_MODEL)
    throw new Error('USER_ENDPOINT needs USER_MODEL (the model that plays the user).');
  return {
    endpoint: env.USER_ENDPOINT,
    model: env.USER_MODEL,
    ...(env.USER_API_KEY_ENV ? { apiKeyEnv: env.USER_API_KEY_ENV } : {}),
  };
}

/**
 * The settings from the environment (QUICK=1: the tiny version CI runs) and arguments (`--fresh`,
 * `--publish`); `isModel` says whether a folder holds a model (train:default's work is looked for).
 * Throws for a HELDOUT that is not a count of HELDOUT_TASKS's tasks, HELDOUT_TASKS with `--publish`,
 * or user settings without their endpoint or model.
 */
export function measureSettings(
  env: Record<string, string | undefined>,
  argv: readonly string[],
  root: string,
  isModel: (dir: string) => boolean,
): MeasureSettings {
  const quick = env.QUICK === '1';
  const pick = (name: string, full: string, tiny: string) => env[name] ?? (quick ? tiny : full);
  const trainWork = path.join(root, '.rehearsal/training/default');
  const policy = fromEnv(env.POLICY, root, 'models/default');
  const sftFinal = path.join(trainWork, 'sft/final');
  const base = env.BASE ? path.resolve(env.BASE) : !quick && isModel(sftFinal) ? sftFinal : policy;
  // C: the SFT with private-rehearsal memories when the recipe has that stage, else the SFT.
  const recipeStart =
    env.RECIPE_START ??
    (quick
      ? undefined
      : ['sft-memory', 'sft'].map((s) => path.join(trainWork, s, 'final')).find(isModel));
  const seeds = numbers(pick('SEEDS', '0,1,2', '0'));
  const heldoutTasks = heldoutTasksSetting(env, quick, argv);
  const user = userSetting(env);
  return {
    quick,
    work: fromEnv(
      env.WORK,
      root,
      quick ? '.rehearsal/measure-envace-quick' : '.rehearsal/measure-envace',
    ),
    recipeFile: fromEnv(env.RECIPE, root, 'training/default/recipe.json'),
    policy,
    base,
    ...(recipeStart ? { recipeStart: path.resolve(recipeStart) } : {}),
    seeds,
    // The dose: 16 tasks × 8 episodes = 128 episodes an iteration, 8 mini-batches of 16 episodes,
    // 2 epochs: 16 optimizer steps an iteration, 208 in 13 iterations, each with act rows.
    iterations: Number(pick('ITERATIONS', '13', '1')),
    ...(env.EPISODES || quick ? { episodes: Number(pick('EPISODES', '', '2')) } : {}),
    grpoTasks: Number(pick('GRPO_TASKS', '8', '1')),
    miniBatchEpisodes: Number(pick('MINI_BATCH', '16', '2')),
    ppoEpochs: Number(pick('PPO_EPOCHS', '2', '1')),
    lr: Number(pick('LR', '0.0002', '0.0002')),
    heldout: Number(pick('HELDOUT', '300', '1')),
    ...(heldoutTasks ? { heldoutTasks } : {}),
    ...(user ? { user } : {}),
    fidelityTasks: Number(pick('FIDELITY_TASKS', '50', '1')),
    fidelityEpisodes: Number(pick('FIDELITY_EPISODES', '4', '2')),
    ...(env.GROUNDED === '1' || env.GROUNDED === '0' ? { grounded: env.GROUNDED === '1' } : {}),
    budgets: numbers(pick('BUDGETS', '2,4', '1')),
    privateSeeds: numbers(pick('PRIVATE_SEEDS', seeds.join(','), '0')),
    rehearsalTemperature: Number(pick('REHEARSAL_TEMPERATURE', '0.8', '0.8')),
    fresh: argv.includes('--fresh'),
    publish: argv.includes('--publish'),
  };
}
