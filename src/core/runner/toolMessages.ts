import { canonicalJson } from '../base/canonicalJson';
import type { JsonObject, JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import { ENVACE_ERROR_CODES } from '../protocol/codes';
import type { ParseDialect } from '../protocol/dialect';
import { parsePythonJson } from '../protocol/pythonJsonLoads';
import { sanitizeTextForTokenizer, stripPythonWhitespace } from '../protocol/pythonText';
import type { PythonValue } from '../protocol/pythonValue';
import { parsePythonValue, pythonGet, pythonStrOf } from '../protocol/pythonValue';
import { parseStrictJson } from '../protocol/strictJson';
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from '../protocol/actParser';
import { findBlocks } from '../protocol/text';
import { pythonJsonDumps, pythonStr } from './envaceText';
import type { ToolResultContent } from '../fidelity/responseValue';
import { looksLikeError } from '../fidelity/responseValue';
import type { RehearsalResult } from '../trace/format/schema';

/** The text a tool message carries for an actual response (what the policy reads). */
export function actualToolText(
  response: ToolResultContent | undefined,
  error?: { code: string; message: string },
): string {
  if (!response)
    return canonicalJson({
      error: `${error?.code ?? 'NO_RESPONSE'}: ${error?.message ?? 'the tool gave no response'}`,
    });
  if (
    response.structured !== undefined &&
    response.structured !== null &&
    !(response.text ?? []).length
  )
    return canonicalJson(response.structured);
  return (response.text ?? []).join('\n');
}

/**
 * The text of the tool message for a recorded actual response: EnvACE's `format_tool_error` bytes
 * for an error with one of EnvACE's codes (a run in the `envace` dialect records them, with their
 * details), else {@link actualToolText}.
 */
export function actualEventToolText(
  actual:
    | {
        response?: ToolResultContent;
        error?: { code: string; message: string; details?: JsonObject };
      }
    | undefined,
): string {
  const e = actual?.error;
  if (e && !actual.response && ENVACE_ERROR_CODES.includes(e.code))
    return simulatorErrorText(e.code, e.message, e.details);
  return actualToolText(actual?.response, e);
}

/** A rehearsed response as the tool result an imagined episode continues on. */
export function rehearsedToolResult(value: JsonValue): ToolResultContent {
  const text = canonicalJson(value);
  return looksLikeError(value) ? { text: [text], isError: true } : { text: [text] };
}

/**
 * The tool result an imagined episode continues on, from its rehearsal as the trace records it: the
 * rehearsed value, or, when the rehearsal did not parse, the simulator's error. The runner plays it,
 * and the editor reads an imagined attempt back from its trace with it.
 */
export function imaginedToolResult(rehearsal: RehearsalResult): ToolResultContent {
  return rehearsal.ok
    ? rehearsedToolResult(rehearsal.value)
    : { text: [simulatorErrorText(rehearsal.code, rehearsal.message)], isError: true };
}

/** The name EnvACE gives the tool message that reports an act parse error (envs.py). */
export const PARSE_ERROR_TOOL_NAME = 'error_tool_call';

/**
 * The tool message that answers an act that did not parse: {@link PARSE_ERROR_TOOL_NAME} with
 * EnvACE's payload for its code ({@link parseErrorToolText}), as the runner's feedback and EnvACE's
 * records write it.
 */
export function parseErrorToolMessage(
  turnText: string,
  error: { code: string; message: string },
  dialect: ParseDialect,
): { role: 'tool'; name: string; content: string } {
  return {
    role: 'tool',
    name: PARSE_ERROR_TOOL_NAME,
    content: parseErrorToolText(error.code, error.message, turnText, dialect),
  };
}

/**
 * The tool message that reports an act parse error back to the policy (feedback mode), byte for
 * byte as EnvACE writes it: the payloads of `parse_tool_calls`
 * (agent_system/environments/env_package/checklist/tool_parser.py), `json.dumps(payload,
 * ensure_ascii=True)` in envs.py. `turnText` is what the policy wrote: the JSON error quotes its
 * block, the name error its name and arguments.
 */
export function parseErrorToolText(
  code: string,
  message: string,
  turnText = '',
  dialect: ParseDialect = 'studio',
): string {
  // tool_parser.py's blocks: `\n<tool_call>\n(.*?)\n</tool_call>`, each `.strip()`ped (Python's
  // strip in the envace dialect; the studio's own dialect keeps the blocks as JavaScript trims them).
  const envace = dialect === 'envace';
  const parseJson = envace ? parsePythonJson : parseStrictJson;
  // envs.py guards the caller's text before parse_tool_calls: the payload quotes the guarded text.
  const seen = envace ? sanitizeTextForTokenizer(turnText) : turnText;
  const blocks = findBlocks(seen, TOOL_CALL_OPEN, TOOL_CALL_CLOSE).map((b) =>
    envace ? stripPythonWhitespace(b.inner) : b.inner.trim(),
  );
  switch (code) {
    case 'NO_TOOL_CALL_FOUND':
      return pythonJsonDumps({
        error_tool_call:
          'No tool call found. Please check your output format. The correct (<tool_call>\n{"name": ..., "arguments": { ... }}\n</tool_call>).',
      });
    case 'JSON_DECODE_ERROR': {
      const bad = blocks.find((b) => !parseJson(b).ok) ?? blocks[0] ?? '';
      return pythonJsonDumps({
        error_tool_call: `One tool call can not be parsed as JSON: ${bad}`,
      });
    }
    case 'NO_ARGUMENTS':
      return pythonJsonDumps({
        error_tool_call: 'No argumets found in one tool call. Use empty dict if no argument.',
      });
    case 'NON_SERIALIZABLE_ARGUMENTS':
      return pythonJsonDumps({
        error_tool_call: 'NON_SERIALIZABLE_ARGUMENTS in one tool call',
        detail: message,
      });
    case 'INVALID_TOOL_NAME': {
      if (envace) {
        const act = pythonInvalidNameAction(blocks);
        return pythonJsonDumps({
          error_tool_call: 'INVALID_TOOL_NAME in one tool call',
          raw_name: pythonStrOf(act?.name),
          arguments: pythonStrOf(act?.arguments),
        });
      }
      const act = invalidNameAction(blocks, dialect);
      return pythonJsonDumps({
        error_tool_call: 'INVALID_TOOL_NAME in one tool call',
        raw_name: pythonStr(act?.name),
        arguments: pythonStr(act?.arguments),
      });
    }
    default:
      return simulatorErrorText(code, message);
  }
}

/** The first action of the blocks whose name is not a non-empty string (INVALID_TOOL_NAME's), in the studio dialect. */
function invalidNameAction(
  blocks: string[],
  dialect: ParseDialect,
): { name: JsonValue | undefined; arguments: JsonValue | undefined } | undefined {
  const envace = dialect === 'envace';
  for (const b of blocks) {
    const parsed = envace ? parsePythonJson(b) : parseStrictJson(b);
    if (!parsed.ok) continue;
    for (const a of Array.isArray(parsed.value) ? parsed.value : [parsed.value]) {
      if (!isJsonObject(a)) return { name: undefined, arguments: undefined };
      const name = a['name'];
      if (typeof name !== 'string' || !(envace ? stripPythonWhitespace(name) : name.trim()))
        return { name, arguments: a['parameters'] ?? a['arguments'] };
    }
  }
  return undefined;
}

/**
 * The action tool_parser.py reports INVALID_TOOL_NAME for, in Python's own values (so that `str()`
 * keeps `1.0`, big integers, `nan` and the key order as written): the first action with arguments
 * whose name is not a string that is non-empty once stripped.
 */
function pythonInvalidNameAction(
  blocks: string[],
): { name: PythonValue | undefined; arguments: PythonValue | undefined } | undefined {
  for (const b of blocks) {
    const parsed = parsePythonValue(b);
    if (!parsed) return undefined;
    for (const act of parsed.type === 'list' ? parsed.items : [parsed]) {
      const name = pythonGet(act, 'name');
      let args = pythonGet(act, 'parameters');
      if (args === undefined || args.type === 'None') args = pythonGet(act, 'arguments');
      if (args === undefined || args.type === 'None') return undefined;
      if (name?.type !== 'str' || !stripPythonWhitespace(name.value))
        return { name, arguments: args };
    }
  }
  return undefined;
}

/**
 * A tool error as EnvACE's simulator writes it (simulate_core/_error.py, `format_tool_error`):
 * `{"error_tool_call": {"code": ..., "message": ...[, "details": ...]}}` by `json.dumps(...,
 * ensure_ascii=True)`. The tool message of an imagined call whose rehearsal did not parse, and of a
 * call EnvACE's tool refuses (TOOL_NOT_AVAILABLE, ...) in the `envace` dialect.
 */
export function simulatorErrorText(code: string, message: string, details?: JsonObject): string {
  return pythonJsonDumps({
    error_tool_call: details ? { code, message, details } : { code, message },
  });
}

/**
 * A recorded actual response as EnvACE's tool message: a call that got no response (the tool failed,
 * timed out, or does not exist) is `format_tool_error`'s `{"error_tool_call": ...}` whatever its
 * code, since that is how every failure reaches EnvACE's caller and how `envs.py` knows a tool
 * failed (`_last_tool_failed`: the turn scores 0 and the episode ends, as under `--reward envace`).
 */
export function envaceRecordToolText(actual: {
  response?: ToolResultContent;
  error?: { code: string; message: string; details?: JsonObject };
}): string {
  const e = actual.error;
  if (e && !actual.response) return simulatorErrorText(e.code, e.message, e.details);
  return actualEventToolText(actual);
}
