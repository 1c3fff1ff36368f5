/**
 * A small, fast, seedable generator (mulberry32): floats in [0, 1), the same sequence for the same
 * seed on every machine, which `Math.random` cannot give.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A shuffled copy of `items` (Fisher-Yates over mulberry32): the same items and seed, the same order. */
export function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const random = mulberry32(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * A seed for one stream of random numbers, derived from a seed and labels (FNV-1a over their text,
 * then one mulberry32 step): distinct labels give unrelated streams, where `seed + k` made the k-th
 * stream of one seed the (k-1)-th of the next (a GRPO iteration's episodes replayed the draws of the
 * iteration before, and a task's rehearsals those of its next episode's acts).
 */
export function mixSeed(seed: number, ...labels: (string | number)[]): number {
  let h = 0x811c9dc5;
  for (const ch of [seed, ...labels].join('\u0000')) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return Math.floor(mulberry32(h)() * 4294967296) >>> 0;
}
