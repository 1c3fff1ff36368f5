import type { JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import { parseStrictJson } from '../protocol/strictJson';

/**
 * A tool response reduced to what fidelity compares: a JSON value, or text when the tool answered
 * with something that is not JSON; `isError` says whether it is an error response.
 */
export type ResponseValue =
  | { kind: 'json'; value: JsonValue; isError: boolean }
  | { kind: 'text'; text: string; isError: boolean };

/** The content of an MCP tool result, as the studio records it. */
export interface ToolResultContent {
  /** Text items of `content`, in order. */
  text?: string[];
  /** `structuredContent`, when the tool returned it. */
  structured?: JsonValue;
  /** MCP's `isError`. */
  isError?: boolean;
}

const ERROR_KEYS = ['error', 'error_tool_call'];

/** True when a JSON value reads as an error response: a top-level `error` key, or `isError: true`. */
export function looksLikeError(value: JsonValue): boolean {
  if (!isJsonObject(value)) return false;
  if (value['isError'] === true) return true;
  return ERROR_KEYS.some(
    (k) =>
      Object.prototype.hasOwnProperty.call(value, k) && value[k] !== null && value[k] !== false,
  );
}

/** The value of a rehearsal: its parsed JSON; error state read from the JSON itself. */
export function rehearsalValue(value: JsonValue): ResponseValue {
  return { kind: 'json', value, isError: looksLikeError(value) };
}

/**
 * The value of an actual tool response: `structuredContent` when present, else the text items
 * joined, as JSON when they parse, else as text.
 */
export function actualValue(result: ToolResultContent): ResponseValue {
  const flagged = result.isError === true;
  if (result.structured !== undefined && result.structured !== null) {
    return {
      kind: 'json',
      value: result.structured,
      isError: flagged || looksLikeError(result.structured),
    };
  }
  const text = (result.text ?? []).join('\n');
  const parsed = parseStrictJson(text);
  if (parsed.ok && text.trim() !== '')
    return { kind: 'json', value: parsed.value, isError: flagged || looksLikeError(parsed.value) };
  return { kind: 'text', text, isError: flagged };
}
