import type { JsonObject, JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import type { ActParse } from '../protocol/actParser';
import { parseActOutput } from '../protocol/actParser';
import type { ParseDialect } from '../protocol/dialect';
import type { RehearsalParse } from '../protocol/rehearsalParser';
import { parseRehearsalOutput } from '../protocol/rehearsalParser';

/**
 * How a run's parse dialect applies to what a policy wrote. A policy parses its own text with the
 * studio's rules; a run in the `envace` dialect parses the same raw text again as EnvACE's Python
 * does, so that the trace records the turn as an EnvACE rollout would have seen it.
 */

/** The act parse of a policy turn in the run's dialect. */
export function actParseIn(
  act: { text: string; parse: ActParse },
  dialect: ParseDialect,
): ActParse {
  return dialect === 'envace' ? parseActOutput(act.text, { dialect }) : act.parse;
}

/** The rehearsal parse of a sample in the run's dialect. */
export function rehearsalParseIn(
  sample: { text: string; parse: RehearsalParse },
  dialect: ParseDialect,
): RehearsalParse {
  return dialect === 'envace' ? parseRehearsalOutput(sample.text, { dialect }) : sample.parse;
}

/** A call's coded error as EnvACE words it, with the `details` its `format_tool_error` payload carries. */
export interface EnvaceToolError {
  code: string;
  message: string;
  details?: JsonObject;
}

/** Python's `type(v).__name__` of a value `json.loads` returned. */
function pythonTypeName(v: JsonValue): string {
  if (v === null) return 'NoneType';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  return 'dict';
}

/**
 * The EnvACE error for a studio environment error that meets the same condition
 * (agent_system/environments/env_package/checklist/mcp_tool.py `execute`, phase 0): a tool the
 * task does not offer is TOOL_NOT_AVAILABLE, arguments that are not an object INVALID_PARAMETERS,
 * with EnvACE's messages and details (`original_index` is the task id). Other errors are kept.
 */
export function envaceToolError(
  error: { code: string; message: string },
  call: { name: string; args: JsonValue; taskId: string },
): EnvaceToolError {
  if (error.code === 'UNKNOWN_TOOL') {
    return {
      code: 'TOOL_NOT_AVAILABLE',
      message: `tool name '${call.name}' is not found. Please check your function call and use provided tools.`,
      details: { tool: call.name, original_index: call.taskId },
    };
  }
  if (error.code === 'INVALID_ARGUMENTS' && !isJsonObject(call.args)) {
    return {
      code: 'INVALID_PARAMETERS',
      message: "'parameters' is missing, empty, or not a JSON object.",
      details: { tool: call.name, parameters_type: pythonTypeName(call.args) },
    };
  }
  return error;
}

/**
 * The code an episode ends with, in the run's dialect: a prompt that leaves no room for the reply
 * (the policy's PROMPT_TOO_LONG: prompt plus max tokens past the model's positions) is EnvACE's
 * LENGTH_EXCEEDED (envs.py `_check_caller_length_or_terminate`: prompt plus max_response_length
 * reaching max_model_len ends the episode) in the envace dialect.
 */
export function envaceEpisodeCode(code: string, dialect: ParseDialect): string {
  return dialect === 'envace' && code === 'PROMPT_TOO_LONG' ? 'LENGTH_EXCEEDED' : code;
}
