import type { JsonValue, ParseResult } from '../base/json';
import { isJsonObject } from '../base/json';
import { sanitizeForTokenizer } from './pythonText';

/**
 * JSON as Python's `json.loads` reads it, for the `envace` parse dialect. Python accepts three
 * literals that standard JSON lacks (`NaN`, `Infinity`, `-Infinity`) and reads a number too large
 * for a double (`1e999`) as infinity; EnvACE's parsers take all of them as valid. The studio keeps
 * traces in standard JSON, so each such number is stored in MongoDB Extended JSON's encoding of a
 * double, `{"$numberDouble": "NaN" | "Infinity" | "-Infinity"}` (the spelling Python's `json.dumps`
 * writes), which every JSON reader, the fidelity diff and the exports carry unchanged.
 */

/** The key of the object that stands for a non-finite number in a trace. */
export const NON_FINITE_KEY = '$numberDouble';

/** How a non-finite number is spelled inside {@link NON_FINITE_KEY} (Python's `json.dumps` spelling). */
export type NonFiniteSpelling = 'NaN' | 'Infinity' | '-Infinity';

/** The trace encoding of a non-finite number. */
export function encodeNonFinite(n: number): JsonValue {
  const spelling: NonFiniteSpelling = Number.isNaN(n) ? 'NaN' : n > 0 ? 'Infinity' : '-Infinity';
  return { [NON_FINITE_KEY]: spelling };
}

/** The spelling when `v` is the encoding of a non-finite number (an object with that one key), else undefined. */
export function nonFiniteSpelling(v: JsonValue): NonFiniteSpelling | undefined {
  if (!isJsonObject(v)) return undefined;
  const keys = Object.keys(v);
  const s = v[NON_FINITE_KEY];
  return keys.length === 1 && (s === 'NaN' || s === 'Infinity' || s === '-Infinity')
    ? s
    : undefined;
}

const LITERALS: readonly NonFiniteSpelling[] = ['-Infinity', 'Infinity', 'NaN'];

/**
 * Rewrites each `NaN`/`Infinity`/`-Infinity` token outside strings with `replace(spelling)`; the
 * count of tokens seen. Python's scanner takes these literals only where a value may stand, so a
 * replacement that is itself one value keeps a text valid or invalid exactly as Python judges it.
 */
function rewriteLiterals(
  text: string,
  replace: (s: NonFiniteSpelling) => string,
): { text: string; count: number } {
  let out = '';
  let at = 0;
  let count = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') {
      inString = true;
      continue;
    }
    if (ch !== 'N' && ch !== 'I' && ch !== '-') continue;
    const literal = LITERALS.find((l) => text.startsWith(l, i));
    if (!literal) continue;
    out += text.slice(at, i) + replace(literal);
    i += literal.length - 1;
    at = i + 1;
    count++;
  }
  return { text: count ? out + text.slice(at) : text, count };
}

/** The text without the whitespace JSON allows around a value (space, \t, \n, \r). */
function stripJsonWhitespace(text: string): string {
  return text.replace(/^[ \t\n\r]+|[ \t\n\r]+$/g, '');
}

/** Replaces, in place and without recursion, every non-finite number (`1e999`) with its encoding. */
function encodeNonFiniteNumbers(root: JsonValue): JsonValue {
  if (typeof root === 'number') return Number.isFinite(root) ? root : encodeNonFinite(root);
  const stack: JsonValue[] = [root];
  while (stack.length) {
    const x = stack.pop() as JsonValue;
    if (x === null || typeof x !== 'object') continue;
    const entries: [string | number, JsonValue][] = Array.isArray(x)
      ? x.map((v, i) => [i, v])
      : Object.entries(x);
    for (const [k, v] of entries) {
      if (typeof v === 'number' && !Number.isFinite(v))
        (x as Record<string | number, JsonValue>)[k] = encodeNonFinite(v);
      else if (v !== null && typeof v === 'object') stack.push(v);
    }
  }
  return root;
}

/** A parse; `nonFiniteNumber` when the whole text is one non-finite number (a float to Python, not an object). */
export type PythonJsonParse = ParseResult<JsonValue, string> & { nonFiniteNumber?: boolean };

/**
 * Parses JSON text as Python's `json.loads` accepts it; non-finite numbers come back in the
 * {@link NON_FINITE_KEY} encoding. Never throws. Integers beyond 2^53 lose precision (Python keeps
 * them exact), and one beyond a double's range reads as Infinity where Python keeps the integer.
 */
export function parsePythonJson(text: string): PythonJsonParse {
  const encoded = rewriteLiterals(text, (s) => `{"${NON_FINITE_KEY}":"${s}"}`);
  try {
    const raw = JSON.parse(encoded.text) as JsonValue;
    const wholeLiteral =
      encoded.count === 1 && LITERALS.includes(stripJsonWhitespace(text) as NonFiniteSpelling);
    const nonFiniteNumber = wholeLiteral || (typeof raw === 'number' && !Number.isFinite(raw));
    const value = encodeNonFiniteNumbers(raw);
    return nonFiniteNumber ? { ok: true, value, nonFiniteNumber } : { ok: true, value };
  } catch (err) {
    if (!encoded.count)
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    // The message of a text of the same length, so that its position points into what the policy wrote.
    const samePositions = rewriteLiterals(text, (s) => ` 0${' '.repeat(s.length - 2)}`).text;
    try {
      JSON.parse(samePositions);
    } catch (err2) {
      return { ok: false, error: err2 instanceof Error ? err2.message : String(err2) };
    }
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The value as EnvACE passes it on after `json.dumps(..., ensure_ascii=False)` and its tokenizer
 * guard (mcp_tool.py `_sanitize_text_for_tokenizer`): every string and key with lone surrogates and
 * noncharacters replaced by U+FFFD. Recursive: call it on a value already bounded in depth.
 */
export function sanitizedValue(v: JsonValue): JsonValue {
  if (typeof v === 'string') return sanitizeForTokenizer(v);
  if (Array.isArray(v)) return v.map(sanitizedValue);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, JsonValue> = {};
  for (const [k, x] of Object.entries(v)) out[sanitizeForTokenizer(k)] = sanitizedValue(x);
  return out;
}

/**
 * Compact JSON text of a value (as `JSON.stringify` writes it) with each encoded non-finite number
 * written back as the literal Python's `json.dumps` writes (`NaN`, `Infinity`, `-Infinity`): the
 * text EnvACE holds in a tool call's `arguments` string. Recursive: for values bounded in depth.
 */
export function jsonTextWithLiterals(v: JsonValue): string {
  const spelling = nonFiniteSpelling(v);
  if (spelling) return spelling;
  if (Array.isArray(v)) return `[${v.map(jsonTextWithLiterals).join(',')}]`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  return `{${Object.entries(v)
    .map(([k, x]) => `${JSON.stringify(k)}:${jsonTextWithLiterals(x)}`)
    .join(',')}}`;
}
