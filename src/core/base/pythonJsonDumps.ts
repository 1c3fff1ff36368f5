/**
 * JSON as Python's `json.dumps` writes it, for text that EnvACE's Python builds and a policy reads
 * in both systems: keys in their order, `", "` and `": "` between items (`","` with an indent),
 * `ensure_ascii`, and numbers as `repr` writes them (CPython's `json/encoder.py`).
 */
import type { JsonValue } from './json';

/** Options of {@link pythonJsonDumps}, named after `json.dumps`' own. */
export interface PythonJsonOptions {
  /** `ensure_ascii` (default true): every character outside space..`~` as `\uXXXX`. */
  ensureAscii?: boolean;
  /** `indent`: unset writes one line; a number puts each item on a line of its own, that many spaces deep per level (0: none). */
  indent?: number;
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

// Python escapes by UTF-16 unit in effect: an astral character becomes its surrogate pair, and
// with ensure_ascii=False a lone surrogate stays raw (JSON.stringify would escape it).
function pythonJsonString(s: string, ensureAscii: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    const code = s.charCodeAt(i);
    if (SHORT_ESCAPES[ch]) out += SHORT_ESCAPES[ch];
    else if (code < 0x20 || (ensureAscii && code > 0x7e))
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out + '"';
}

/**
 * A number as Python writes the value `json.loads` gave for it: a whole number below 1e16 as an
 * `int`, anything else as `repr(float)` (positional for exponents -4 to 15, else `1e-05`, `1e+16`).
 * A JSON `1.0` is `1` to JavaScript, so it is written `1`.
 */
export function pythonNumber(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Infinity' : '-Infinity';
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n); // -0 too: json.loads('-0') is the int 0
  const [mantissa, exponentText] = n.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent >= -4 && exponent < 16) return String(n);
  return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

/** `json.dumps(value, ensure_ascii=..., indent=...)` with the default separators. */
export function pythonJsonDumps(value: JsonValue, options: PythonJsonOptions = {}): string {
  const ensureAscii = options.ensureAscii ?? true;
  const indent = options.indent === undefined ? undefined : ' '.repeat(options.indent);
  const write = (v: JsonValue, depth: number): string => {
    if (v === null) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'number') return pythonNumber(v);
    if (typeof v === 'string') return pythonJsonString(v, ensureAscii);
    const items = Array.isArray(v)
      ? v.map((x) => write(x, depth + 1))
      : Object.entries(v).map(
          ([k, x]) => `${pythonJsonString(k, ensureAscii)}: ${write(x, depth + 1)}`,
        );
    const [open, close] = Array.isArray(v) ? ['[', ']'] : ['{', '}'];
    if (items.length === 0) return open + close;
    if (indent === undefined) return open + items.join(', ') + close;
    const inner = '\n' + indent.repeat(depth + 1);
    return open + inner + items.join(',' + inner) + '\n' + indent.repeat(depth) + close;
  };
  return write(value, 0);
}
