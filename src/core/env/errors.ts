/**
 * Why a tool call has no actual response. These codes are stable: they are written to traces
 * (`call.actual.error.code`) and documented in docs/task-format.md ("Environment errors").
 */
export const ENV_ERROR_CODES = [
  /** The tool did not answer within the call's timeout. The server keeps running. */
  'TOOL_TIMEOUT',
  /** The caller cancelled the call (its AbortSignal fired). */
  'CALL_CANCELLED',
  /** The server process exited or its connection closed; the message carries the tail of its stderr. */
  'SERVER_CRASHED',
  /** The server could not be started or did not complete the MCP handshake. */
  'SERVER_START_FAILED',
  /** The result is larger than the environment's limit (see RESULT_LIMIT_BYTES). */
  'RESULT_TOO_LARGE',
  /** The result's structured content nests deeper than MAX_JSON_DEPTH levels; not recorded. The server keeps running. */
  'RESULT_TOO_DEEP',
  /** The server broke the protocol: garbage on stdout, or an answer of the wrong shape. */
  'PROTOCOL_ERROR',
  /** The tool is not offered to the agent in this task (unknown, outside the allow-list, or an admin tool). */
  'UNKNOWN_TOOL',
  /** The arguments are not a JSON object, which MCP requires. */
  'INVALID_ARGUMENTS',
  /** Replay: the recording holds no answer for this tool with these arguments. */
  'NO_RECORDED_ANSWER',
  /** A call was made before `startEpisode` or after `dispose`. */
  'NO_EPISODE',
] as const;

/** One of {@link ENV_ERROR_CODES}. */
export type EnvErrorCode = (typeof ENV_ERROR_CODES)[number];

/** A coded reason why a call has no actual response; the shape of `call.actual.error`. */
export interface EnvError {
  code: EnvErrorCode;
  message: string;
}

/** Builds an {@link EnvError}. */
export function envError(code: EnvErrorCode, message: string): EnvError {
  return { code, message };
}
