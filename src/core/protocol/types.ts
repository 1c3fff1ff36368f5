import type { JsonValue } from '../base/json';

/** A tool the policy may call: name, description and JSON Schema of its arguments. */
export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: JsonValue;
}

/** A tool call inside an assistant chat message (OpenAI / Hugging Face chat-template shape). */
export interface ChatToolCall {
  id?: string;
  type: 'function';
  function: { name: string; arguments: JsonValue };
}

/** One chat message as chat templates and OpenAI-compatible servers take it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: ChatToolCall[];
  /** For `tool` messages: the tool that answered. */
  name?: string;
  tool_call_id?: string;
}

/** A recorded call with its real result, shown to the rehearse role as a few-shot example. */
export interface RecordedExample {
  tool: string;
  arguments: JsonValue;
  result: JsonValue;
  /** The text `result` was parsed from, as the tool wrote it (imports keep it): the envace profile shows it verbatim, as EnvACE does. */
  text?: string;
}

/** OpenAI-style function schema, the form chat templates render in their tools section. */
export function toFunctionSchema(tool: ToolDefinition): {
  type: 'function';
  function: { name: string; description: string; parameters: JsonValue };
} {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description ?? '', parameters: tool.parameters },
  };
}
