import { MAX_JSON_DEPTH } from '../base/json';
import { pythonNumber } from '../base/pythonJsonDumps';

/**
 * A JSON text as Python's `json.loads` builds it, kept in Python's own types, so that `str()` of a
 * value can be written byte for byte as CPython writes it (EnvACE's INVALID_TOOL_NAME payload holds
 * `str(name)` and `str(arguments)`, tool_parser.py). JavaScript's values lose what `str()` shows: a
 * JSON `1.0` is a float to Python and `1` to JavaScript, an integer past 2^53 stays exact, and a
 * dict keeps its keys in the order written (JavaScript moves integer-like keys first).
 */
export type PythonValue =
  | { type: 'None' }
  | { type: 'bool'; value: boolean }
  | { type: 'int'; digits: string }
  | { type: 'float'; value: number }
  | { type: 'str'; value: string }
  | { type: 'list'; items: PythonValue[] }
  | { type: 'dict'; entries: Map<string, PythonValue> };

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;
const LITERALS: [string, PythonValue][] = [
  ['null', { type: 'None' }],
  ['true', { type: 'bool', value: true }],
  ['false', { type: 'bool', value: false }],
  ['NaN', { type: 'float', value: NaN }],
  ['Infinity', { type: 'float', value: Infinity }],
  ['-Infinity', { type: 'float', value: -Infinity }],
];

class Reader {
  at = 0;
  constructor(readonly text: string) {}

  skipWhitespace(): void {
    WHITESPACE.lastIndex = this.at;
    WHITESPACE.exec(this.text);
    this.at = WHITESPACE.lastIndex;
  }

  /** The value at the cursor; undefined when the text is not JSON to Python or nests too deep. */
  value(depth: number): PythonValue | undefined {
    if (depth > MAX_JSON_DEPTH) return undefined;
    this.skipWhitespace();
    const ch = this.text[this.at];
    if (ch === '"') return this.string();
    if (ch === '[' || ch === '{') return this.container(ch, depth);
    for (const [literal, value] of LITERALS)
      if (this.text.startsWith(literal, this.at)) {
        this.at += literal.length;
        return value;
      }
    NUMBER.lastIndex = this.at;
    const m = NUMBER.exec(this.text);
    if (!m) return undefined;
    this.at = NUMBER.lastIndex;
    // json/scanner.py: a fraction or an exponent makes a float (1e999 is inf), else an exact int.
    if (m[1] !== undefined || m[2] !== undefined) return { type: 'float', value: Number(m[0]) };
    return { type: 'int', digits: BigInt(m[0]).toString() };
  }

  string(): { type: 'str'; value: string } | undefined {
    let i = this.at + 1;
    while (i < this.text.length && this.text[i] !== '"') i += this.text[i] === '\\' ? 2 : 1;
    if (i >= this.text.length) return undefined;
    try {
      // JSON.parse decodes escapes as json.loads does (an escaped pair joins, a lone one stays).
      const value = JSON.parse(this.text.slice(this.at, i + 1)) as string;
      this.at = i + 1;
      return { type: 'str', value };
    } catch {
      return undefined;
    }
  }

  container(open: '[' | '{', depth: number): PythonValue | undefined {
    const close = open === '[' ? ']' : '}';
    const items: PythonValue[] = [];
    const entries = new Map<string, PythonValue>();
    this.at++;
    this.skipWhitespace();
    if (this.text[this.at] === close) {
      this.at++;
      return open === '[' ? { type: 'list', items } : { type: 'dict', entries };
    }
    for (;;) {
      if (open === '{') {
        this.skipWhitespace();
        const key = this.text[this.at] === '"' ? this.string() : undefined;
        this.skipWhitespace();
        if (!key || this.text[this.at] !== ':') return undefined;
        this.at++;
        const v = this.value(depth + 1);
        if (!v) return undefined;
        // A repeated key keeps its first place and takes the last value, as a dict built from pairs.
        entries.set(key.value, v);
      } else {
        const v = this.value(depth + 1);
        if (!v) return undefined;
        items.push(v);
      }
      this.skipWhitespace();
      const ch = this.text[this.at++];
      if (ch === close) return open === '[' ? { type: 'list', items } : { type: 'dict', entries };
      if (ch !== ',') return undefined;
    }
  }
}

/**
 * Reads a JSON text as Python's `json.loads` does (its `NaN`/`Infinity` literals too); undefined
 * when it is not JSON to Python, or nests deeper than MAX_JSON_DEPTH. Never throws.
 */
export function parsePythonValue(text: string): PythonValue | undefined {
  const reader = new Reader(text);
  const value = reader.value(1);
  reader.skipWhitespace();
  return value && reader.at === text.length ? value : undefined;
}

/** `dict.get(key)`: the value of a dict's key, undefined when `v` is no dict or lacks it. */
export function pythonGet(v: PythonValue | undefined, key: string): PythonValue | undefined {
  return v?.type === 'dict' ? v.entries.get(key) : undefined;
}

/** `repr(float)`: the shortest digits that read back, `1.0`, `1e+16`, `1e-05`, `nan`, `-inf`. */
function floatRepr(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (Object.is(n, -0)) return '-0.0';
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return `${n}.0`;
  return pythonNumber(n);
}

// Python's str.isprintable() is false for the categories Other (Cc, Cf, Cs, Co, Cn) and
// Separator (Zs, Zl, Zp), but for the ASCII space.
const NOT_PRINTABLE = /[\p{C}\p{Z}]/u;

function hex(c: number, width: number): string {
  return c.toString(16).padStart(width, '0');
}

/**
 * `repr(s)` as CPython writes it (Objects/unicodeobject.c `unicode_repr`): single quotes unless the
 * text holds one and no double quote; `\\`, the quote, `\t`, `\n`, `\r` escaped; other control
 * characters and everything `str.isprintable()` refuses as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
 */
export function pythonStringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + hex(c, 2);
    else if (c < 0x7f || !NOT_PRINTABLE.test(ch)) out += ch;
    else if (c <= 0xff) out += '\\x' + hex(c, 2);
    else if (c <= 0xffff) out += '\\u' + hex(c, 4);
    else out += '\\U' + hex(c, 8);
  }
  return out + quote;
}

/** `repr(v)`: `None`, `True`, `1.0`, `'a'`, `['x', nan]`, `{'b': 1, '1': 2}`. Recursive: values are bounded in depth. */
export function pythonRepr(v: PythonValue): string {
  switch (v.type) {
    case 'None':
      return 'None';
    case 'bool':
      return v.value ? 'True' : 'False';
    case 'int':
      return v.digits;
    case 'float':
      return floatRepr(v.value);
    case 'str':
      return pythonStringRepr(v.value);
    case 'list':
      return `[${v.items.map(pythonRepr).join(', ')}]`;
    case 'dict':
      return `{${[...v.entries].map(([k, x]) => `${pythonStringRepr(k)}: ${pythonRepr(x)}`).join(', ')}}`;
  }
}

/** `str(v)`: a string itself, anything else its repr; `None` for a missing value (`dict.get`). */
export function pythonStrOf(v: PythonValue | undefined): string {
  if (v === undefined) return 'None';
  return v.type === 'str' ? v.value : pythonRepr(v);
}
