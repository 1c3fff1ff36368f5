import { mulberry32 } from '../../base/random';
import { OUTSIDE_NUMBERS } from '../../base/outsideNumbers';

/** How the next token is chosen. `temperature` 0 means greedy. */
/** The most samples of one prompt decoded together (`rehearse run --samples`, `serve`'s `n`): each holds its own cache. */
export const MAX_SAMPLES = OUTSIDE_NUMBERS.flagSamples.max;

export interface SamplingSettings {
  temperature: number;
  /** Keep the smallest set of tokens whose probability reaches `topP` (1 = off). */
  topP: number;
  /** Keep the `topK` most likely tokens (0 = off). */
  topK: number;
  /** Seed of the sampler; the same seed and prompt give the same text. */
  seed: number;
}

/** Greedy decoding: deterministic, the default for evaluation. */
export const GREEDY: SamplingSettings = { temperature: 0, topP: 1, topK: 0, seed: 0 };

/** The sampler's random numbers: reproducible across runs for the same seed. */
export const seededRandom = mulberry32;

/** Index of the largest value in `logits[offset .. offset + size)`. */
export function argmax(logits: Float32Array, offset: number, size: number): number {
  let best = 0;
  let bestValue = -Infinity;
  for (let i = 0; i < size; i++) {
    const v = logits[offset + i];
    if (v > bestValue) {
      bestValue = v;
      best = i;
    }
  }
  return best;
}

/**
 * Picks the next token from one row of logits. Greedy when `temperature` is 0; otherwise softmax at
 * the temperature, restricted by top-k and top-p, sampled with `random`. Plain sampling (no top-k,
 * no top-p) is one pass over the row; the restricted forms sort only what they must.
 */
export function sampleToken(
  logits: Float32Array,
  offset: number,
  size: number,
  settings: SamplingSettings,
  random: () => number,
): number {
  if (settings.temperature <= 0) return argmax(logits, offset, size);
  const t = settings.temperature;
  const max = logits[offset + argmax(logits, offset, size)];
  if (settings.topK <= 0 && settings.topP >= 1) {
    let total = 0;
    for (let i = 0; i < size; i++) total += Math.exp((logits[offset + i] - max) / t);
    let r = random() * total;
    for (let i = 0; i < size; i++) {
      r -= Math.exp((logits[offset + i] - max) / t);
      if (r <= 0) return i;
    }
    return size - 1;
  }
  const candidates = topIndices(
    logits,
    offset,
    size,
    settings.topK > 0 ? Math.min(settings.topK, size) : size,
  );
  const weights = candidates.map((i) => Math.exp((logits[offset + i] - max) / t));
  const total = weights.reduce((s, w) => s + w, 0);
  let kept = candidates.length;
  if (settings.topP < 1) {
    let mass = 0;
    for (let j = 0; j < candidates.length; j++) {
      mass += weights[j] / total;
      if (mass >= settings.topP) {
        kept = j + 1;
        break;
      }
    }
  }
  let keptTotal = 0;
  for (let j = 0; j < kept; j++) keptTotal += weights[j];
  let r = random() * keptTotal;
  for (let j = 0; j < kept; j++) {
    r -= weights[j];
    if (r <= 0) return candidates[j];
  }
  return candidates[kept - 1];
}

/** Indices of the `k` largest values of a row, largest first. */
export function topIndices(
  logits: Float32Array,
  offset: number,
  size: number,
  k: number,
): number[] {
  if (k >= size) {
    const all = Array.from({ length: size }, (_, i) => i);
    return all.sort((a, b) => logits[offset + b] - logits[offset + a]);
  }
  // Keep a sorted window of the best k seen so far: O(size * k) worst case, fast for small k.
  const best: number[] = [];
  for (let i = 0; i < size; i++) {
    const v = logits[offset + i];
    if (best.length === k && v <= logits[offset + best[k - 1]]) continue;
    let at = best.length;
    while (at > 0 && logits[offset + best[at - 1]] < v) at--;
    best.splice(at, 0, i);
    if (best.length > k) best.pop();
  }
  return best;
}
