import type { TaskFile, TaskSplit } from './format/taskFile';

/** A seeded generator of tasks for one built-in domain: the same seed always gives the same task. */
export interface TaskGenerator {
  /** The domain, as in `{ "builtin": domain }`. */
  readonly domain: string;
  /** The task of a seed; its world is the server's state after `rehearsal__reset({ seed })`. */
  generate(seed: number): TaskFile;
}

/**
 * The split of a seed: `seed % 10` of 0-7 is train, 8 validation, 9 test (80/10/10). The rule
 * depends on the seed alone, so a task never changes split when more tasks are generated.
 */
export function splitOfSeed(seed: number): TaskSplit {
  const r = seed % 10;
  return r < 8 ? 'train' : r === 8 ? 'validation' : 'test';
}

/**
 * The tag of a task whose reference solution a recipe must not show the act as a demonstration
 * (`bank-foresight`'s refusals: the act is meant to learn the rule that refuses them only through
 * rehearsal). Its reference still plays, grades and logs as any other.
 */
export const NO_DEMONSTRATION_TAG = 'no-demonstration';

/** Options of {@link generateTasks}. */
export interface GenerateOptions {
  /** How many tasks. */
  count: number;
  /** First seed tried (default 0). */
  start?: number;
  /** Only seeds of this split. */
  split?: TaskSplit;
  /** Only tasks a demonstration may be made of: those not tagged {@link NO_DEMONSTRATION_TAG}. */
  demonstrations?: boolean;
}

/**
 * Tasks of consecutive seeds from `start`: those of `split` only, when given, and with
 * `demonstrations`, only those not tagged {@link NO_DEMONSTRATION_TAG} (the seeds of the others are
 * skipped, so a task keeps its seed and id).
 */
export function generateTasks(generator: TaskGenerator, options: GenerateOptions): TaskFile[] {
  const out: TaskFile[] = [];
  for (let seed = options.start ?? 0; out.length < options.count; seed++) {
    if (options.split && splitOfSeed(seed) !== options.split) continue;
    const task = generator.generate(seed);
    if (options.demonstrations && task.tags?.includes(NO_DEMONSTRATION_TAG)) continue;
    out.push(task);
  }
  return out;
}
