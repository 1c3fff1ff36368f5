/** EnvACE's error codes for a policy turn whose tool-call blocks cannot be parsed (tool_parser.py). */
export const ACT_PARSE_ERROR_CODES = [
  'NO_TOOL_CALL_FOUND',
  'JSON_DECODE_ERROR',
  'NO_ARGUMENTS',
  'NON_SERIALIZABLE_ARGUMENTS',
  'INVALID_TOOL_NAME',
] as const;

/** Why a turn's tool calls could not be parsed. */
export type ActParseErrorCode = (typeof ACT_PARSE_ERROR_CODES)[number];

/**
 * EnvACE's error codes for a rehearsal whose predicted tool response cannot be parsed
 * (`_parse_sim_response`, agent_system/agent/agents/checklist/tool_simulator_agent.py); both
 * dialects emit them.
 */
export const REHEARSAL_PARSE_ERROR_CODES = [
  'EMPTY_SIMULATOR_OUTPUT',
  'NO_EXECUTION_RESULT_TAG_FOUND',
  'EXECUTION_RESULT_TAG_MALFORMED',
  'SIMULATOR_JSON_DECODE_ERROR',
  'INVALID_EXECUTION_RESULT_TYPE',
] as const;

/** Rehearsal parse codes only the `envace` dialect emits. */
export const ENVACE_REHEARSAL_PARSE_ERROR_CODES = [
  /**
   * EnvACE (tool_simulator_agent.py, `_parse_sim_response`): `json.dumps` of the parsed result
   * raised. The studio's `envace` dialect: a result it cannot write back, nested deeper than
   * MAX_JSON_DEPTH (the `studio` dialect calls that SIMULATOR_JSON_DECODE_ERROR).
   */
  'NON_SERIALIZABLE_EXECUTION_RESULT',
] as const;

const REHEARSAL_PARSE_CODES: ReadonlySet<string> = new Set([
  ...REHEARSAL_PARSE_ERROR_CODES,
  ...ENVACE_REHEARSAL_PARSE_ERROR_CODES,
]);

/** Whether `code` says a rehearsal did not parse, in either dialect. */
export function isRehearsalParseCode(code: string | undefined): boolean {
  return code !== undefined && REHEARSAL_PARSE_CODES.has(code);
}

/** Why a rehearsal could not be parsed. */
export type RehearsalParseErrorCode =
  | (typeof REHEARSAL_PARSE_ERROR_CODES)[number]
  | (typeof ENVACE_REHEARSAL_PARSE_ERROR_CODES)[number];

/** Any protocol parse error code. */
export type ParseErrorCode = ActParseErrorCode | RehearsalParseErrorCode;

/**
 * The other codes EnvACE writes into a tool message's `{"error_tool_call": {"code", "message",
 * "details"}}` (simulate_core/_error.py's `format_tool_error`), or records as an episode's
 * `error_code`. A run in the `envace` dialect emits TOOL_NOT_AVAILABLE, INVALID_PARAMETERS and
 * LENGTH_EXCEEDED where the studio meets the same condition; import and export keep every one verbatim.
 */
export const ENVACE_TOOL_ERROR_CODES = [
  /** The simulator judged the call malformed (simulate_core/prompts/simulator/validation_system_instruction.txt). */
  'INVALID_TOOL_CALL_FORMAT',
  /** mcp_tool.py `execute`, phase 0: the tool is not among the sample's candidate tools. The studio: a tool the task does not offer. */
  'TOOL_NOT_AVAILABLE',
  /** mcp_tool.py phase 0: the parameters are missing or not a JSON object. The studio: arguments that are not an object. */
  'INVALID_PARAMETERS',
  /** mcp_tool.py phase 0: the sample's `original_index` has no candidate tools or recorded calls. */
  'INDEX_NOT_FOUND',
  /** mcp_tool.py: the parameters fail the tool's schema (required fields, primitive types, enums). */
  'SCHEMA_VALIDATION_FAILED',
  /** envs.py `_check_caller_length_or_terminate`: the caller's prompt plus max_response_length reaches max_model_len; the episode ends. The studio: PROMPT_TOO_LONG. */
  'LENGTH_EXCEEDED',
] as const;

/** One of {@link ENVACE_TOOL_ERROR_CODES}. */
export type EnvaceToolErrorCode = (typeof ENVACE_TOOL_ERROR_CODES)[number];

/** Every code EnvACE emits: the act and rehearsal parse codes and its tool error codes. */
export const ENVACE_ERROR_CODES: readonly string[] = [
  ...ACT_PARSE_ERROR_CODES,
  ...REHEARSAL_PARSE_ERROR_CODES,
  ...ENVACE_REHEARSAL_PARSE_ERROR_CODES,
  ...ENVACE_TOOL_ERROR_CODES,
];

/** The longest code read from outside that is kept; a longer one is cut to this length. */
export const MAX_OUTSIDE_CODE_LENGTH = 64;

/**
 * A code read from outside (an imported dataset, a tool's error payload): EnvACE's and unknown
 * ones kept verbatim, bounded to {@link MAX_OUTSIDE_CODE_LENGTH} characters; undefined when it is
 * not a non-empty string.
 */
export function outsideErrorCode(v: unknown): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  return v.length > MAX_OUTSIDE_CODE_LENGTH ? v.slice(0, MAX_OUTSIDE_CODE_LENGTH) : v;
}

/** A parse failure, kept as data on the turn or call it belongs to. */
export interface ParseError<C extends ParseErrorCode = ParseErrorCode> {
  code: C;
  message: string;
}
