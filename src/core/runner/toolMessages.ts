import { canonicalJson } from '../base/canonicalJson';
import type { JsonValue } from '../base/json';
import type { ToolResultContent } from '../fidelity/responseValue';
import { looksLikeError } from '../fidelity/responseValue';

/** The text a tool message carries for an actual response (what the policy reads). */
export function actualToolText(response: ToolResultContent | undefined, error?: { code: string; message: string }): string {
  if (!response) return canonicalJson({ error: `${error?.code ?? 'NO_RESPONSE'}: ${error?.message ?? 'the tool gave no response'}` });
  if (response.structured !== undefined && response.structured !== null && !(response.text ?? []).length) return canonicalJson(response.structured);
  return (response.text ?? []).join('\n');
}

/** A rehearsed response as the tool result an imagined episode continues on. */
export function rehearsedToolResult(value: JsonValue): ToolResultContent {
  const text = canonicalJson(value);
  return looksLikeError(value) ? { text: [text], isError: true } : { text: [text] };
}

/** The tool message that reports a parse error back to the policy (feedback mode, EnvACE's payload shape). */
export function parseErrorToolText(code: string, message: string): string {
  return canonicalJson({ error_tool_call: { code, message } });
}
