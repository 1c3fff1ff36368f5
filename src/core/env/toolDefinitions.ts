import type { JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import type { ToolDefinition } from '../protocol/types';

/** An MCP tool as `tools/list` returns it (the fields the studio reads). */
export interface McpTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
  /** MCP's tool annotations: hints a server gives, not promises (`readOnlyHint` is read). */
  annotations?: { readOnlyHint?: unknown };
}

/**
 * An MCP tool as the policy sees it: name, description, and its input schema as the OpenAI-style
 * `parameters` (the `$schema` marker dropped; a missing schema becomes an empty object schema).
 */
export function toToolDefinition(tool: McpTool): ToolDefinition {
  let parameters: JsonValue = { type: 'object', properties: {} };
  if (isJsonObject(tool.inputSchema as JsonValue)) {
    const { $schema: _ignored, ...rest } = tool.inputSchema as { [k: string]: JsonValue };
    parameters = rest;
  }
  return {
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    parameters,
  };
}

/** The tool's MCP `readOnlyHint` when the server gave one as a boolean; undefined otherwise. */
export function readOnlyHintOf(tool: McpTool): boolean | undefined {
  const hint = tool.annotations?.readOnlyHint;
  return typeof hint === 'boolean' ? hint : undefined;
}
