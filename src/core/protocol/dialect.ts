import type { JsonValue } from '../base/json';
import type { PythonJsonParse } from './pythonJsonLoads';
import { parsePythonJson, sanitizedValue } from './pythonJsonLoads';
import { sanitizeTextForTokenizer, stripPythonWhitespace } from './pythonText';
import { parseStrictJson } from './strictJson';
import { stripAsciiWhitespace } from './text';

/**
 * Which rules the act and rehearsal parsers follow. `studio` (the default): standard JSON and ASCII
 * whitespace only, the rules the Python trainer mirrors byte for byte and that every value of a
 * trace survives. `envace`: EnvACE's Python exactly (`json.loads`, `str.strip()`), so that a turn is
 * valid or not as it is in an EnvACE rollout; its non-finite numbers are stored encoded (pythonJsonLoads.ts).
 */
export const PARSE_DIALECTS = ['studio', 'envace'] as const;

/** One of {@link PARSE_DIALECTS}. */
export type ParseDialect = (typeof PARSE_DIALECTS)[number];

/** Options of the act and rehearsal parsers. */
export interface ParseOptions {
  /** Default `studio`. */
  dialect?: ParseDialect;
}

/** The text primitives of a dialect. */
export interface DialectRules {
  strip(s: string): string;
  parseJson(text: string): PythonJsonParse;
  /** What becomes of a parsed value (depth-bounded) on its way on: kept, or EnvACE's tokenizer guard. */
  passOn(v: JsonValue): JsonValue;
  /**
   * The policy's text as the act parser reads it: kept, or with EnvACE's tokenizer guard applied
   * first (envs.py guards the caller's text, NUL included, before `parse_tool_calls` sees it).
   */
  guardText(s: string): string;
  /**
   * True when blocks that hold no call (`[]`) make the turn a final answer, as in EnvACE (no call,
   * no error: the turn is judged); the studio keeps them a turn of zero calls.
   */
  noCallsIsFinal: boolean;
  /**
   * True when a turn without `<tool_call>` that still holds a fragment of a call (a stray
   * `</tool_call>`, a rehearsal's or tool response's tag, a call's `"arguments":` key) is an act
   * parse error rather than a final answer. EnvACE's tool_parser.py looks for `<tool_call>` only and
   * judges such text as an answer, where `no_call` checks pass it by doing nothing.
   */
  callFragmentIsError: boolean;
}

const RULES: Record<ParseDialect, DialectRules> = {
  studio: {
    strip: stripAsciiWhitespace,
    parseJson: parseStrictJson,
    passOn: (v) => v,
    guardText: (s) => s,
    noCallsIsFinal: false,
    callFragmentIsError: true,
  },
  envace: {
    strip: stripPythonWhitespace,
    parseJson: parsePythonJson,
    passOn: sanitizedValue,
    guardText: sanitizeTextForTokenizer,
    noCallsIsFinal: true,
    callFragmentIsError: false,
  },
};

/** The primitives of the dialect the options name (the studio's when none). */
export function dialectRules(options: ParseOptions | undefined): DialectRules {
  return RULES[options?.dialect === 'envace' ? 'envace' : 'studio'];
}

/** True when `v` names a dialect. */
export function isParseDialect(v: unknown): v is ParseDialect {
  return (PARSE_DIALECTS as readonly unknown[]).includes(v);
}
