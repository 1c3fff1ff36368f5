/**
 * Python's idea of whitespace, for the `envace` parse dialect: EnvACE's parsers call `str.strip()`
 * (tool_parser.py, tool_simulator_agent.py), which strips every character whose `str.isspace()` is
 * true. That set differs from JavaScript's `trim()` (which also strips U+FEFF, and keeps
 * U+001C..U+001F and U+0085).
 */

/**
 * Every code point for which CPython 3.11's `str.isspace()` is true, printed by
 * `/usr/bin/python3 -c "import sys; print([hex(c) for c in range(sys.maxunicode+1) if chr(c).isspace()])"`:
 * the ASCII whitespace, the information separators U+001C..U+001F, NEL, NBSP, the Ogham space
 * mark, the en quad .. hair space, the line and paragraph separators, the narrow NBSP, the medium
 * mathematical space and the ideographic space. 29 code points.
 */
export const PYTHON_WHITESPACE_CODE_POINTS: readonly number[] = [
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001,
  0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f,
  0x205f, 0x3000,
];

const PYTHON_WS = new Set(PYTHON_WHITESPACE_CODE_POINTS.map((c) => String.fromCharCode(c)));

/** Removes leading and trailing whitespace exactly as Python's `str.strip()` with no argument does. */
export function stripPythonWhitespace(s: string): string {
  let start = 0;
  // Every code point of the set is in the BMP, so one UTF-16 unit is one character here.
  while (start < s.length && PYTHON_WS.has(s[start])) start++;
  return rstripPythonWhitespace(s.slice(start));
}

/** Removes trailing whitespace exactly as Python's `str.rstrip()` with no argument does. */
export function rstripPythonWhitespace(s: string): string {
  let end = s.length;
  while (end > 0 && PYTHON_WS.has(s[end - 1])) end--;
  return s.slice(0, end);
}

/**
 * True for a code point EnvACE replaces by U+FFFD before a text reaches the tokenizer
 * (mcp_tool.py `_sanitize_text_for_tokenizer`): a lone surrogate, U+FDD0..U+FDEF, the last two
 * code points of any plane (U+FFFE, U+FFFF, U+1FFFE, ...), and NUL when `nul` is set.
 */
function replacedForTokenizer(c: number, nul: boolean): boolean {
  return (
    (nul && c === 0) ||
    (c >= 0xd800 && c <= 0xdfff) ||
    (c >= 0xfdd0 && c <= 0xfdef) ||
    (c & 0xfffe) === 0xfffe
  );
}

function sanitized(s: string, nul: boolean): string {
  // Fast path: no NUL (when it counts) and nothing above U+D7FF, nothing to replace.
  if (!(nul ? /[\0\ud800-\uffff]/ : /[\ud800-\uffff]/).test(s)) return s;
  let out = '';
  for (const ch of s) out += replacedForTokenizer(ch.codePointAt(0)!, nul) ? '\ufffd' : ch;
  return out;
}

/**
 * A parsed value's string with each code point EnvACE's tokenizer guard replaces turned into
 * U+FFFD. NUL stays: EnvACE guards the `json.dumps` text, where a NUL is already escaped.
 */
export function sanitizeForTokenizer(s: string): string {
  return sanitized(s, false);
}

/** A raw text (the policy's, a tool result's) as EnvACE's tokenizer guard leaves it: NUL replaced too. */
export function sanitizeTextForTokenizer(s: string): string {
  return sanitized(s, true);
}
