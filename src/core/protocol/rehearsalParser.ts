import type { JsonValue } from '../base/json';
import { isJsonObject, MAX_JSON_DEPTH, nestsDeeperThan } from '../base/json';
import type { ParseError, RehearsalParseErrorCode } from './codes';
import type { ParseOptions } from './dialect';
import { dialectRules } from './dialect';
import { isFiniteJson } from './strictJson';
import { findBlocks, removeBlocks } from './text';

/** The opening marker whose absence means the rehearsal gave no result at all. */
export const EXECUTION_RESULT_START = '<execution_result>';
/** A rehearsal's result is exactly `\n<execution_result>\n{json}\n</execution_result>`. */
export const EXECUTION_RESULT_OPEN = '\n<execution_result>\n';
/** See {@link EXECUTION_RESULT_OPEN}. */
export const EXECUTION_RESULT_CLOSE = '\n</execution_result>';
/** Reasoning the rehearse role may write before its result; it is removed before parsing. */
export const THINK_OPEN = '<think>';
/** See {@link THINK_OPEN}. */
export const THINK_CLOSE = '</think>';

/** A parsed rehearsal: the predicted tool response, or a parse error (kept as data). */
export type RehearsalParse =
  | { ok: true; value: JsonValue; think?: string }
  | { ok: false; error: ParseError<RehearsalParseErrorCode> };

const fail = (code: RehearsalParseErrorCode, message: string): RehearsalParse => ({
  ok: false,
  error: { code, message },
});

/**
 * Parses the rehearse role's output with EnvACE's strict rules: complete `<think>` blocks are
 * removed; the first `\n<execution_result>\n...\n</execution_result>` block must hold JSON that is
 * a non-empty object or an array. The `envace` dialect reads JSON and whitespace as
 * tool_simulator_agent.py's Python does (see dialect.ts). Never throws.
 */
export function parseRehearsalOutput(text: string, options?: ParseOptions): RehearsalParse {
  if (typeof text !== 'string') text = '';
  const { strip, parseJson, passOn } = dialectRules(options);
  const thinks = findBlocks(text, THINK_OPEN, THINK_CLOSE);
  const rest = removeBlocks(text, THINK_OPEN, THINK_CLOSE);
  if (strip(rest) === '')
    return fail(
      'EMPTY_SIMULATOR_OUTPUT',
      'The rehearsal is empty: expected an <execution_result> block.',
    );
  if (!rest.includes(EXECUTION_RESULT_START)) {
    return fail('NO_EXECUTION_RESULT_TAG_FOUND', 'The rehearsal has no <execution_result> tag.');
  }
  const blocks = findBlocks(rest, EXECUTION_RESULT_OPEN, EXECUTION_RESULT_CLOSE);
  if (blocks.length === 0) {
    return fail(
      'EXECUTION_RESULT_TAG_MALFORMED',
      'An <execution_result> tag was found, but its newline boundaries or its closing tag are missing.',
    );
  }
  const body = strip(blocks[0].inner);
  const parsed = parseJson(body);
  if (!parsed.ok)
    return fail(
      'SIMULATOR_JSON_DECODE_ERROR',
      `The content of <execution_result> is not valid JSON (${parsed.error}).`,
    );
  if (!isFiniteJson(parsed.value))
    return fail(
      'SIMULATOR_JSON_DECODE_ERROR',
      'The content of <execution_result> has a number out of range.',
    );
  const value = parsed.value;
  // A value that deep is an array or a non-empty object, so this order agrees with EnvACE's
  // (type first, then json.dumps, which the studio's depth bound stands in for).
  if (nestsDeeperThan(value)) {
    return fail(
      options?.dialect === 'envace'
        ? 'NON_SERIALIZABLE_EXECUTION_RESULT'
        : 'SIMULATOR_JSON_DECODE_ERROR',
      `The content of <execution_result> nests deeper than ${MAX_JSON_DEPTH} levels.`,
    );
  }
  if (parsed.nonFiniteNumber)
    return fail(
      'INVALID_EXECUTION_RESULT_TYPE',
      'The result must be a non-empty object or an array, not a number.',
    );
  if (!isResultType(value))
    return fail(
      'INVALID_EXECUTION_RESULT_TYPE',
      `The result must be a non-empty object or an array, not ${describe(value)}.`,
    );
  const think = thinks.length ? thinks.map((b) => strip(b.inner)).join('\n\n') : undefined;
  const kept = passOn(value);
  return think === undefined ? { ok: true, value: kept } : { ok: true, value: kept, think };
}

function isResultType(v: JsonValue): boolean {
  return Array.isArray(v) || (isJsonObject(v) && Object.keys(v).length > 0);
}

function describe(v: JsonValue): string {
  if (v === null) return 'null';
  if (isJsonObject(v)) return 'an empty object';
  return `a ${typeof v}`;
}

/** Renders a tool response as the rehearse role is trained to write it (canonical JSON inside the tags). */
export function formatRehearsal(resultJson: string, think?: string): string {
  const head = think ? `${THINK_OPEN}\n${think}\n${THINK_CLOSE}` : '';
  return `${head}${EXECUTION_RESULT_OPEN}${resultJson}${EXECUTION_RESULT_CLOSE}`;
}
