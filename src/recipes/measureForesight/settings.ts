import * as path from 'node:path';
import { fromEnv } from '../trainDefault/settings';

/** What measure:foresight trains and compares, at what size (every field has its environment variable). */
export interface ForesightSettings {
  quick: boolean;
  /** `WORK`: .rehearsal/measure-foresight (QUICK: measure-foresight-quick). */
  work: string;
  /** `RECIPE`: the recipe whose SFT (its memory SFT's optimizer) and GRPO settings are used. */
  recipeFile: string;
  /** `BASE`: the policy both SFT arms continue from (its tokenizer and prompt settings are kept). */
  base: string;
  /** `DEMOS`: act demonstrations of each family (`generate --demonstrations`). */
  demonstrations: number;
  /** `LOGGED`: logged write calls (`bank-foresight-logging`), the world model's data. */
  logged: number;
  /** `MEMORY_TASKS`: train tasks of the main family, both verdicts, whose act rows read a memory. */
  memoryTasks: number;
  /** `FLIP_RATE`: the share of memory-reading rows whose memory says the opposite of the truth. */
  flipRate: number;
  /** `BUILTIN_DEMOS`: built-in demonstrations per domain replayed in both SFTs (0: none). */
  builtinDemonstrations: number;
  /** `HELDOUT`: held-out tasks of the foresight family (and of its twin, the same seeds). */
  heldout: number;
  /** `BUILTIN_HELDOUT`: measure:envace's held-out tasks per built-in domain. */
  builtinHeldout: number;
  /** `SFT_STEPS`, `SFT_BATCH`: each SFT arm's optimizer steps and rows a step. */
  sftSteps: number;
  sftBatch: number;
  /** `SEEDS`: GRPO training seeds of the imagined arm. */
  seeds: number[];
  /** `ITERATIONS`, `GRPO_TASKS` (new tasks each iteration), `EPISODES`, `MINI_BATCH`, `PPO_EPOCHS`, `LR`. */
  iterations: number;
  grpoTasks: number;
  episodes?: number;
  miniBatchEpisodes: number;
  ppoEpochs: number;
  lr: number;
  /** `ORDERS`: private rehearsal's orders on the foresight family and its twin. */
  orders: string[];
  /** `BUILTIN_ORDERS`: its orders on the built-in families. */
  builtinOrders: string[];
  /** `PRIVATE_SEEDS`: a private-rehearsal evaluation per seed (default SEEDS). */
  privateSeeds: number[];
  /** `REHEARSAL_TEMPERATURE`: the imagined attempts' temperature. */
  rehearsalTemperature: number;
  fresh: boolean;
  publish: boolean;
}

/** Private rehearsal's budget in every comparison (the differences are named after it). */
export const BUDGET = 2;

/**
 * The seeds of this recipe's tasks, which no other recipe uses (train:default takes each built-in
 * domain's first seeds, measure:envace 20,000 and 30,000 on). Train split from 40,000: the foresight
 * and twin demonstrations, the memory-reading tasks and the logged calls (the same seeds, so the
 * logged calls hold the true outcome of every memory-reading task's write), and the built-in
 * demonstrations; GRPO's train-split tasks from 50,000; held-out test-split tasks from 60,000 (the
 * foresight family, its twin and its logging variant: the same requests). A seed's split is
 * `seed % 10` (9 is test), so 600 held-out tasks take 6,000 seeds.
 */
export const FORESIGHT_TRAIN_START = 40_000;
export const FORESIGHT_GRPO_START = 50_000;
export const FORESIGHT_HELDOUT_START = 60_000;
/** Train-split tasks that fit between two starts (8 in 10 seeds are train). */
const TRAIN_SEEDS_BETWEEN = ((FORESIGHT_GRPO_START - FORESIGHT_TRAIN_START) * 8) / 10;

const numbers = (text: string) => (text.trim() === '' ? [] : text.split(',').map(Number));
const words = (text: string) =>
  text
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);

/** What is wrong with the settings, in words (nothing: an empty list). */
export function foresightSettingsProblems(s: ForesightSettings): string[] {
  const problems: string[] = [];
  const largest = Math.max(s.demonstrations * 2, s.logged, s.memoryTasks);
  if (largest > TRAIN_SEEDS_BETWEEN)
    problems.push(
      `the train-split tasks from ${FORESIGHT_TRAIN_START} would reach GRPO's seeds (at most ${TRAIN_SEEDS_BETWEEN} tasks)`,
    );
  if (s.grpoTasks * s.iterations > TRAIN_SEEDS_BETWEEN)
    problems.push(`GRPO_TASKS × ITERATIONS would reach the held-out seeds`);
  if (s.memoryTasks > s.logged)
    problems.push('MEMORY_TASKS exceeds LOGGED: each memory reads its task’s logged outcome');
  if (!(s.flipRate >= 0 && s.flipRate <= 0.5)) problems.push('FLIP_RATE must be in [0, 0.5]');
  for (const order of [...s.orders, ...s.builtinOrders])
    if (order !== 'parallel' && order !== 'sequential')
      problems.push(`an order is parallel or sequential, not ${order}`);
  if (!s.orders.includes('sequential') || !s.builtinOrders.includes('sequential'))
    problems.push(
      'ORDERS and BUILTIN_ORDERS must hold sequential (the differences are named on it)',
    );
  if (!s.seeds.length || !s.privateSeeds.length)
    problems.push('SEEDS and PRIVATE_SEEDS are needed');
  return problems;
}

/**
 * The settings from the environment (QUICK=1: the tiny version CI runs) and arguments (`--fresh`,
 * `--publish`); the defaults are the full size. Fails on settings whose seeds would overlap.
 */
export function foresightSettings(
  env: Record<string, string | undefined>,
  argv: readonly string[],
  root: string,
): ForesightSettings {
  const quick = env.QUICK === '1';
  const pick = (name: string, full: string, tiny: string) => env[name] ?? (quick ? tiny : full);
  const seeds = numbers(pick('SEEDS', '0,1,2', '0'));
  const s: ForesightSettings = {
    quick,
    work: fromEnv(
      env.WORK,
      root,
      quick ? '.rehearsal/measure-foresight-quick' : '.rehearsal/measure-foresight',
    ),
    recipeFile: fromEnv(env.RECIPE, root, 'training/default/recipe.json'),
    base: env.BASE ? path.resolve(env.BASE) : path.join(root, 'models/default'),
    demonstrations: Number(pick('DEMOS', '300', '2')),
    logged: Number(pick('LOGGED', '2000', '6')),
    memoryTasks: Number(pick('MEMORY_TASKS', '600', '4')),
    flipRate: Number(pick('FLIP_RATE', '0.12', '0.25')),
    builtinDemonstrations: Number(pick('BUILTIN_DEMOS', '100', '1')),
    heldout: Number(pick('HELDOUT', '600', '2')),
    builtinHeldout: Number(pick('BUILTIN_HELDOUT', '300', '1')),
    // 800 steps of 16 rows: about 4 passes over the 3,300 rows of the full size.
    sftSteps: Number(pick('SFT_STEPS', '800', '2')),
    sftBatch: Number(pick('SFT_BATCH', '16', '4')),
    seeds,
    // measure:envace's dose: 16 new tasks × 8 episodes an iteration, mini-batches of 16 episodes,
    // 2 epochs: 16 optimizer steps an iteration, 208 in 13.
    iterations: Number(pick('ITERATIONS', '13', '1')),
    ...(env.EPISODES || quick ? { episodes: Number(pick('EPISODES', '', '2')) } : {}),
    grpoTasks: Number(pick('GRPO_TASKS', '16', '2')),
    miniBatchEpisodes: Number(pick('MINI_BATCH', '16', '2')),
    ppoEpochs: Number(pick('PPO_EPOCHS', '2', '1')),
    lr: Number(pick('LR', '0.0002', '0.0002')),
    orders: words(pick('ORDERS', 'sequential,parallel', 'sequential,parallel')),
    builtinOrders: words(pick('BUILTIN_ORDERS', 'sequential', 'sequential')),
    privateSeeds: numbers(pick('PRIVATE_SEEDS', seeds.join(','), '0')),
    rehearsalTemperature: Number(pick('REHEARSAL_TEMPERATURE', '0.8', '0.8')),
    fresh: argv.includes('--fresh'),
    publish: argv.includes('--publish'),
  };
  const problems = foresightSettingsProblems(s);
  if (problems.length) throw new Error(`measure:foresight settings: ${problems.join('; ')}.`);
  return s;
}
