import { seededShuffle } from '../base/random';

/**
 * Splits task ids into train and held-out sets: a seeded shuffle of the sorted ids, of which
 * `round(fraction × n)` are held out (at least one and at most n − 1 when there are two tasks or
 * more and the fraction is above 0). The same ids, fraction and seed always give the same split,
 * so every episode of a task lands on the same side.
 */
export function splitTasks(
  taskIds: Iterable<string>,
  heldOutFraction: number,
  seed: number,
): { train: Set<string>; heldOut: Set<string> } {
  const ids = seededShuffle([...new Set(taskIds)].sort(), seed);
  let count = Math.round(heldOutFraction * ids.length);
  if (heldOutFraction > 0 && ids.length >= 2) count = Math.min(Math.max(count, 1), ids.length - 1);
  return { heldOut: new Set(ids.slice(0, count)), train: new Set(ids.slice(count)) };
}

/** `rows.jsonl` → `rows.train.jsonl` / `rows.heldout.jsonl`. */
export function splitFileNames(out: string): { train: string; heldOut: string } {
  const m = /^(.*?)(\.[^./\\]+)?$/.exec(out)!;
  const base = m[1];
  const ext = m[2] ?? '';
  return { train: `${base}.train${ext}`, heldOut: `${base}.heldout${ext}` };
}
