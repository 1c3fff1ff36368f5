import type { JsonValue, ParseResult } from '../base/json';

/**
 * Parses JSON text the way both the studio and the Python trainer agree on: standard JSON only
 * (no NaN/Infinity literals), never throwing.
 */
export function parseStrictJson(text: string): ParseResult<JsonValue, string> {
  try {
    return { ok: true, value: JSON.parse(text) as JsonValue };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * False when a number in the value is not finite: a literal such as `1e999` parses to Infinity,
 * which cannot be written back as JSON.
 */
export function isFiniteJson(v: JsonValue): boolean {
  // Iterative: a hostile, deeply nested document must not overflow the stack.
  const stack: JsonValue[] = [v];
  while (stack.length) {
    const x = stack.pop() as JsonValue;
    if (typeof x === 'number') {
      if (!Number.isFinite(x)) return false;
    } else if (Array.isArray(x)) {
      for (const y of x) stack.push(y);
    } else if (x !== null && typeof x === 'object') {
      for (const k of Object.keys(x)) stack.push(x[k]);
    }
  }
  return true;
}
