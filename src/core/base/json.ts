/** Any value that JSON can carry. */
export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** True for plain JSON objects (not arrays, not null). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON type name of a value, as a fidelity score compares it. */
export type JsonType = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';

/** JSON type of a value. */
export function jsonType(v: JsonValue): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v as 'boolean' | 'number' | 'string' | 'object';
}

/** Result of parsing outside input: parsers of outside input return this, they never throw. */
export type ParseResult<T, E> = { ok: true; value: T } | { ok: false; error: E };

/**
 * One JSONL line of `event`: the `first` keys (those present) in that order, then the rest in the
 * event's own order; undefined values left out. Trace and annotation lines put their identity in
 * their first bytes this way. JSON.stringify never writes a raw newline.
 */
export function jsonLineKeysFirst(event: object, first: readonly string[]): string {
  const ordered: Record<string, unknown> = {};
  const source = event as Record<string, unknown>;
  for (const k of first) if (source[k] !== undefined) ordered[k] = source[k];
  for (const [k, v] of Object.entries(source))
    if (!(k in ordered) && v !== undefined) ordered[k] = v;
  return JSON.stringify(ordered);
}

/**
 * A value from outside input, named for an error message: a string quoted (cut at 60 characters), a
 * number, boolean or null as written, anything else by its kind. Never `String(v)` or
 * `JSON.stringify(v)`: an object with a `toString` field, or one nested deeper than the stack, makes
 * those throw.
 */
export function describeOutsideValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  if (v === undefined) return 'nothing';
  return Array.isArray(v) ? 'a list' : 'an object';
}

/** A number from outside input: a number, or a string that reads as one; NaN for anything else (never a throwing conversion). */
export function outsideNumber(v: unknown): number {
  return typeof v === 'number' || typeof v === 'string' ? Number(v) : Number.NaN;
}

/**
 * Deepest nesting the studio takes from outside in a value it keeps (tool arguments and results,
 * imported records): real tools and datasets nest a few dozen levels; a value thousands deep breaks
 * every recursive reader after it (`JSON.stringify` with indentation overflows the stack near 5,000).
 */
export const MAX_JSON_DEPTH = 256;

/**
 * True when `v` nests arrays and objects deeper than `max` levels (a scalar is depth 0). Iterative,
 * never calls a value's own methods, and stops at the first level past `max`.
 */
export function nestsDeeperThan(v: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth + 1 > max) return true;
    const children = Array.isArray(value) ? value : Object.values(value);
    for (const child of children)
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
