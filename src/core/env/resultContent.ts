import type { JsonValue } from '../base/json';
import type { ToolResultContent } from '../fidelity/responseValue';

/**
 * The largest result a call may return, in UTF-8 bytes of its text items plus its structured content
 * as JSON: 8 MiB. A larger result ends the call with RESULT_TOO_LARGE instead of being recorded.
 */
export const RESULT_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * The largest single message read from a stdio server: 16 MiB. A message beyond it closes the
 * connection (the server is restarted for the next episode) and the call ends with RESULT_TOO_LARGE.
 */
export const STDIO_MESSAGE_LIMIT_BYTES = 16 * 1024 * 1024;

interface McpContentItem {
  type: string;
  text?: string;
  mimeType?: string;
  data?: string;
  uri?: string;
  resource?: { uri?: string; text?: string; mimeType?: string };
}

/**
 * Reduces an MCP tool result to what the trace records: text items in order (other content kinds
 * as one-line placeholders, or an embedded resource's text), `structuredContent`, `isError`.
 */
export function toResultContent(result: {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}): ToolResultContent {
  const out: ToolResultContent = {};
  const items = Array.isArray(result.content) ? (result.content as McpContentItem[]) : [];
  const text: string[] = [];
  for (const item of items) {
    if (item.type === 'text' && typeof item.text === 'string') text.push(item.text);
    else if (item.type === 'resource' && typeof item.resource?.text === 'string')
      text.push(item.resource.text);
    else if (item.type === 'image' || item.type === 'audio')
      text.push(
        `[${item.type} ${item.mimeType ?? ''}, ${Math.floor(((item.data ?? '').length * 3) / 4)} bytes]`,
      );
    else if (item.type === 'resource_link' || item.type === 'resource')
      text.push(`[resource ${item.uri ?? item.resource?.uri ?? ''}]`);
    else text.push(`[${String(item.type)} content]`);
  }
  if (items.length) out.text = text;
  if (result.structuredContent !== undefined && result.structuredContent !== null)
    out.structured = result.structuredContent as JsonValue;
  if (result.isError === true) out.isError = true;
  return out;
}

/** Size of a result as {@link RESULT_LIMIT_BYTES} counts it. */
export function resultSize(content: ToolResultContent): number {
  let n = 0;
  for (const t of content.text ?? []) n += Buffer.byteLength(t, 'utf8');
  if (content.structured !== undefined)
    n += Buffer.byteLength(JSON.stringify(content.structured), 'utf8');
  return n;
}
