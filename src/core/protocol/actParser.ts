import type { JsonValue } from '../base/json';
import { isJsonObject, MAX_JSON_DEPTH, nestsDeeperThan } from '../base/json';
import type { ActParseErrorCode, ParseError } from './codes';
import { canonicalJson } from '../base/canonicalJson';
import type { ParseOptions } from './dialect';
import { dialectRules } from './dialect';
import { isFiniteJson } from './strictJson';
import { findBlocks } from './text';

/** The opening marker of a tool-call block; its absence makes a turn a final answer. */
export const TOOL_CALL_START = '<tool_call>';
/** A tool-call block is exactly `\n<tool_call>\n{json}\n</tool_call>`. */
export const TOOL_CALL_OPEN = '\n<tool_call>\n';
/** See {@link TOOL_CALL_OPEN}. */
export const TOOL_CALL_CLOSE = '\n</tool_call>';

/** One tool call the policy asked for. */
export interface ParsedToolCall {
  name: string;
  arguments: JsonValue;
}

/** What a policy turn says: a final answer, tool calls, or a parse error (kept as data). */
export type ActParse =
  | { kind: 'final'; text: string }
  | { kind: 'calls'; text: string; preamble: string; calls: ParsedToolCall[] }
  | { kind: 'error'; text: string; error: ParseError<ActParseErrorCode> };

/**
 * What marks text without `<tool_call>` as a broken call rather than an answer: the protocol's tags
 * that never belong in an answer (a stray closing tag, a rehearsal's or a tool response's), or a
 * call's `"arguments":` key. A small policy sampled at temperature 1 writes such fragments often.
 */
const CALL_FRAGMENT_MARKS: readonly (string | RegExp)[] = [
  '</tool_call>',
  '<execution_result>',
  '</execution_result>',
  '<tool_response>',
  '</tool_response>',
  /"arguments"\s*:/,
];

/** The first mark of a call fragment in `text`, or undefined (see {@link CALL_FRAGMENT_MARKS}). */
export function callFragmentMark(text: string): string | undefined {
  for (const mark of CALL_FRAGMENT_MARKS) {
    if (typeof mark === 'string') {
      if (text.includes(mark)) return mark;
    } else {
      const m = mark.exec(text);
      if (m) return m[0];
    }
  }
  return undefined;
}

const FORMAT_HINT = 'Expected "\\n<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>".';

/**
 * Parses the raw text of a policy turn with EnvACE's strict rules: a turn without `<tool_call>`
 * is a final answer (in the `studio` dialect, unless it holds a fragment of a call: NO_TOOL_CALL_FOUND,
 * see {@link callFragmentMark}); one malformed block invalidates the whole turn; a block may hold one call
 * object or a list of them; `parameters` is accepted as an alias of `arguments`. The `envace`
 * dialect reads JSON and whitespace as tool_parser.py's Python does, guards the text as envs.py does
 * first, and takes blocks that hold no call (`[]`) as a final answer (see dialect.ts). Never throws.
 */
export function parseActOutput(text: string, options?: ParseOptions): ActParse {
  if (typeof text !== 'string') text = '';
  const { strip, parseJson, passOn, guardText, noCallsIsFinal, callFragmentIsError } =
    dialectRules(options);
  const fail = (code: ActParseErrorCode, message: string): ActParse => ({
    kind: 'error',
    text,
    error: { code, message },
  });
  if (!text.includes(TOOL_CALL_START)) {
    const mark = callFragmentIsError ? callFragmentMark(text) : undefined;
    if (mark === undefined) return { kind: 'final', text };
    return fail(
      'NO_TOOL_CALL_FOUND',
      `The turn holds a fragment of a tool call (${JSON.stringify(mark)}) but no complete block. ${FORMAT_HINT}`,
    );
  }
  // The guard cannot make or break a tag; the parse reads the guarded text, `text` stays as written.
  const guarded = guardText(text);

  const blocks = findBlocks(guarded, TOOL_CALL_OPEN, TOOL_CALL_CLOSE);
  if (blocks.length === 0)
    return fail(
      'NO_TOOL_CALL_FOUND',
      `A <tool_call> tag was found but no complete block. ${FORMAT_HINT}`,
    );

  const calls: ParsedToolCall[] = [];
  for (const block of blocks) {
    const body = strip(block.inner);
    const parsed = parseJson(body);
    if (!parsed.ok)
      return fail('JSON_DECODE_ERROR', `A tool call is not valid JSON (${parsed.error}).`);
    const actions = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
    for (const action of actions) {
      const obj = isJsonObject(action) ? action : undefined;
      let args: JsonValue | undefined = obj ? obj['parameters'] : undefined;
      if (args === undefined || args === null) args = obj ? obj['arguments'] : undefined;
      if (args === undefined || args === null)
        return fail(
          'NO_ARGUMENTS',
          'A tool call has no "arguments"; use {} when the tool takes none.',
        );
      // The envace dialect has encoded non-finite numbers already: json.dumps writes them (NaN).
      if (!isFiniteJson(args))
        return fail(
          'NON_SERIALIZABLE_ARGUMENTS',
          'A tool call has arguments that cannot be written back as JSON (a number out of range).',
        );
      if (nestsDeeperThan(args))
        return fail(
          'NON_SERIALIZABLE_ARGUMENTS',
          `A tool call has arguments nested deeper than ${MAX_JSON_DEPTH} levels.`,
        );
      const name = obj ? obj['name'] : undefined;
      const cleanName = typeof name === 'string' ? strip(name) : '';
      if (!cleanName)
        return fail(
          'INVALID_TOOL_NAME',
          'A tool call has no "name", or it is not a non-empty string.',
        );
      calls.push({ name: cleanName, arguments: passOn(args) });
    }
  }
  if (calls.length === 0 && noCallsIsFinal) return { kind: 'final', text };
  const preamble = strip(guarded.slice(0, blocks[0].start));
  return { kind: 'calls', text, preamble, calls };
}

/** Renders tool calls as the protocol expects a policy to write them (arguments in canonical JSON). */
export function formatToolCalls(calls: readonly ParsedToolCall[]): string {
  return calls
    .map(
      (c) =>
        `${TOOL_CALL_OPEN}{"name": ${JSON.stringify(c.name)}, "arguments": ${canonicalJson(c.arguments)}}${TOOL_CALL_CLOSE}`,
    )
    .join('');
}
