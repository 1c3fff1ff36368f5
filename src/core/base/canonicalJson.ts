import type { JsonValue } from './json';

/** Options of {@link canonicalJson}. */
export interface CanonicalJsonOptions {
  /** Spaces per indentation level; 0 (the default) writes compact JSON on one line. */
  indent?: number;
}

/** Orders object keys by UTF-16 code units, the order the Python trainer reproduces. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The canonical text of a number: shortest round-trip form, `-0` as `0`, non-finite as `null`. */
export function canonicalNumber(n: number): string {
  if (!Number.isFinite(n)) return 'null';
  if (Object.is(n, -0)) return '0';
  return JSON.stringify(n);
}

type Frame =
  | { kind: 'array'; items: JsonValue[]; i: number; depth: number }
  | { kind: 'object'; obj: { [k: string]: JsonValue }; keys: string[]; i: number; depth: number };

/**
 * Canonical JSON: keys sorted (UTF-16 order), numbers in their shortest round-trip form, no
 * insignificant whitespace unless `indent` is given. Two values are equal as JSON exactly when their
 * canonical texts are equal. Iterative, so a hostile, deeply nested value cannot overflow the stack.
 */
export function canonicalJson(value: JsonValue, options: CanonicalJsonOptions = {}): string {
  const indent = options.indent ?? 0;
  const pad = (depth: number) => (indent > 0 ? '\n' + ' '.repeat(indent * depth) : '');
  const colon = indent > 0 ? ': ' : ':';
  const parts: string[] = [];
  const stack: Frame[] = [];

  const open = (v: JsonValue, depth: number): void => {
    if (v === null || v === undefined) parts.push('null');
    else if (typeof v === 'number') parts.push(canonicalNumber(v));
    else if (typeof v === 'string') parts.push(JSON.stringify(v));
    else if (typeof v === 'boolean') parts.push(v ? 'true' : 'false');
    else if (Array.isArray(v)) {
      if (v.length === 0) parts.push('[]');
      else {
        parts.push('[');
        stack.push({ kind: 'array', items: v, i: 0, depth });
      }
    } else if (typeof v === 'object') {
      const keys = Object.keys(v)
        .filter((k) => v[k] !== undefined)
        .sort(compareKeys);
      if (keys.length === 0) parts.push('{}');
      else {
        parts.push('{');
        stack.push({ kind: 'object', obj: v, keys, i: 0, depth });
      }
    } else parts.push('null'); // functions, symbols, bigints: not JSON
  };

  open(value, 0);
  while (stack.length) {
    const top = stack[stack.length - 1];
    const len = top.kind === 'array' ? top.items.length : top.keys.length;
    if (top.i >= len) {
      stack.pop();
      parts.push(pad(top.depth), top.kind === 'array' ? ']' : '}');
      continue;
    }
    if (top.i > 0) parts.push(',');
    parts.push(pad(top.depth + 1));
    if (top.kind === 'array') {
      open(top.items[top.i++], top.depth + 1);
    } else {
      const key = top.keys[top.i++];
      parts.push(JSON.stringify(key), colon);
      open(top.obj[key], top.depth + 1);
    }
  }
  return parts.join('');
}
