/** EnvACE's error codes for a policy turn whose tool-call blocks cannot be parsed. */
export const ACT_PARSE_ERROR_CODES = [
  'NO_TOOL_CALL_FOUND',
  'JSON_DECODE_ERROR',
  'NO_ARGUMENTS',
  'NON_SERIALIZABLE_ARGUMENTS',
  'INVALID_TOOL_NAME',
] as const;

/** Why a turn's tool calls could not be parsed. */
export type ActParseErrorCode = (typeof ACT_PARSE_ERROR_CODES)[number];

/** EnvACE's error codes for a rehearsal whose predicted tool response cannot be parsed. */
export const REHEARSAL_PARSE_ERROR_CODES = [
  'EMPTY_SIMULATOR_OUTPUT',
  'NO_EXECUTION_RESULT_TAG_FOUND',
  'EXECUTION_RESULT_TAG_MALFORMED',
  'SIMULATOR_JSON_DECODE_ERROR',
  'INVALID_EXECUTION_RESULT_TYPE',
] as const;

/** Why a rehearsal could not be parsed. */
export type RehearsalParseErrorCode = (typeof REHEARSAL_PARSE_ERROR_CODES)[number];

/** Any protocol parse error code. */
export type ParseErrorCode = ActParseErrorCode | RehearsalParseErrorCode;

/** A parse failure, kept as data on the turn or call it belongs to. */
export interface ParseError<C extends ParseErrorCode = ParseErrorCode> {
  code: C;
  message: string;
}
