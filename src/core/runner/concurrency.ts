import type { PolicyInfo } from '../trace/format/schema';
import { requireNumber } from '../base/numbers';
import { OUTSIDE_NUMBERS } from '../base/outsideNumbers';

/** The most episodes a run keeps in flight: each holds its own servers and its own KV cache. */
export const MAX_CONCURRENCY = OUTSIDE_NUMBERS.flagConcurrency.max;

/**
 * Episodes in flight when nobody says: the reference policy and a model folder play 8 (the policy
 * host decodes the episodes' turns together, and tools wait on their own); an endpoint 16, as
 * evaluation harnesses keep that many requests in flight against vLLM or SGLang.
 */
export const DEFAULT_CONCURRENCY: Record<PolicyInfo['kind'], number> = {
  reference: 8,
  onnx: 8,
  endpoint: 16,
  recorded: 1,
};

/** One line for `--help`: the defaults by policy kind. */
export const CONCURRENCY_HELP = `episodes in flight at once, 1-${MAX_CONCURRENCY} (default ${DEFAULT_CONCURRENCY.onnx} for a model folder or the reference policy, ${DEFAULT_CONCURRENCY.endpoint} for an endpoint)`;

/**
 * `--concurrency`: a whole number from 1 to {@link MAX_CONCURRENCY}, or undefined when not given (the
 * policy kind's default then, {@link concurrencyFor}). Checked before any policy or server starts.
 */
export function concurrencyArg(value: string | undefined): number | undefined {
  return requireNumber(value, OUTSIDE_NUMBERS.flagConcurrency, undefined, { text: true });
}

/** The concurrency a run uses: the one asked for, else the default of the policy's kind. */
export function concurrencyFor(asked: number | undefined, kind: PolicyInfo['kind']): number {
  return asked ?? DEFAULT_CONCURRENCY[kind] ?? 1;
}

/**
 * Runs `work` on every item with at most `limit` at once, in the items' order of starting; a slot
 * number (0 .. limit-1) tells each call which of the caller's per-slot resources it owns. `stop()`
 * returning true starts nothing more (what is in flight finishes). Resolves when all that started
 * have ended; a rejection of `work` rejects the whole once the others in flight have ended.
 */
export async function forEachConcurrent<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number, slot: number) => Promise<void>,
  stop: () => boolean = () => false,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (slot: number) => {
    while (next < items.length && !failure && !stop()) {
      const index = next++;
      try {
        await work(items[index], index, slot);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  const slots = Math.max(1, Math.min(limit, items.length));
  await Promise.all(Array.from({ length: slots }, (_, slot) => worker(slot)));
  if (failure) throw failure.error;
}
