import type { JsonValue } from '../base/json';
import type { PythonJsonParse } from './pythonJson';
import { parsePythonJson, sanitizedValue } from './pythonJson';
import { stripPythonWhitespace } from './pythonText';
import { parseStrictJson } from './strictJson';
import { stripAsciiWhitespace } from './text';

/**
 * Which rules the act and rehearsal parsers follow. `studio` (the default): standard JSON and ASCII
 * whitespace only, the rules the Python trainer mirrors byte for byte and that every value of a
 * trace survives. `envace`: EnvACE's Python exactly (`json.loads`, `str.strip()`), so that a turn is
 * valid or not as it is in an EnvACE rollout; its non-finite numbers are stored encoded (pythonJson.ts).
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
}

const RULES: Record<ParseDialect, DialectRules> = {
  studio: { strip: stripAsciiWhitespace, parseJson: parseStrictJson, passOn: (v) => v },
  envace: { strip: stripPythonWhitespace, parseJson: parsePythonJson, passOn: sanitizedValue },
};

/** The primitives of the dialect the options name (the studio's when none). */
export function dialectRules(options: ParseOptions | undefined): DialectRules {
  return RULES[options?.dialect === 'envace' ? 'envace' : 'studio'];
}

/** True when `v` names a dialect. */
export function isParseDialect(v: unknown): v is ParseDialect {
  return (PARSE_DIALECTS as readonly unknown[]).includes(v);
}
