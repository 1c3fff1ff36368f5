/** A typed column of a trace index table. */
export type Column = Int32Array | Uint32Array | Uint8Array | Float64Array;

/** A copy of `old` in a new array of the same type and `length` values (the first `length` when shorter). */
export function grown<T extends Column>(old: T, length: number): T {
  const next = new (old.constructor as new (n: number) => T)(length);
  next.set((old.length > length ? old.subarray(0, length) : old) as never);
  return next;
}

/** Replaces each named column of `table` by a copy of `capacity` values ({@link grown}). */
export function growColumns<T, K extends keyof T>(
  table: T,
  keys: readonly K[],
  capacity: number,
): void {
  for (const key of keys) table[key] = grown(table[key] as Column, capacity) as T[K];
}
