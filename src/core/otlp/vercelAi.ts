import type { JsonObject, JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import type { ConversationMessage, MessageCall } from './genaiMessages';
import { jsonAttribute, MessageNotJson, valueText } from './genaiMessages';
import type { OtlpSpan } from './otlpJson';

/**
 * The Vercel AI SDK's telemetry (`experimental_telemetry: { isEnabled: true }`): each model call a
 * `ai.generateText.doGenerate` (or `ai.streamText.doStream`) span holding the prompt it sent
 * (`ai.prompt.messages`, the SDK's own message form) and what came back (`ai.response.toolCalls`,
 * `ai.response.text`); each tool call an `ai.toolCall` span (`ai.toolCall.name`, `.id`, `.args` or
 * `.input`, `.result` or `.output`; a throwing tool sets the span's status to ERROR with an
 * exception event). The messages of one model call: its prompt, then its response as one
 * assistant message. Empty for a span that holds no `ai.prompt.messages`.
 */
export function vercelAiMessages(attributes: JsonObject): ConversationMessage[] {
  const prompt = jsonAttribute(attributes['ai.prompt.messages'], 'ai.prompt.messages');
  if (prompt === undefined) return [];
  if (!Array.isArray(prompt)) throw new MessageNotJson('ai.prompt.messages is not a list');
  const out = prompt.flatMap((m) => {
    if (!isJsonObject(m))
      throw new MessageNotJson('ai.prompt.messages holds a message that is not an object');
    return message(m);
  });
  const text = attributes['ai.response.text'];
  const calls = responseCalls(attributes['ai.response.toolCalls']);
  if (typeof text === 'string' || calls.length)
    out.push({ role: 'assistant', text: typeof text === 'string' ? text : '', calls });
  return out;
}

/** `ai.response.toolCalls`: `[{toolCallId, toolName, input}]` (`args` before AI SDK 5). */
function responseCalls(v: JsonValue | undefined): MessageCall[] {
  const parsed = jsonAttribute(v, 'ai.response.toolCalls');
  if (parsed === undefined) return [];
  if (!Array.isArray(parsed)) throw new MessageNotJson('ai.response.toolCalls is not a list');
  return parsed.filter(isJsonObject).flatMap(callOf);
}

function callOf(p: JsonObject): MessageCall[] {
  if (typeof p['toolName'] !== 'string') return [];
  return [
    {
      ...(typeof p['toolCallId'] === 'string' ? { id: p['toolCallId'] } : {}),
      name: p['toolName'],
      arguments: p['input'] ?? p['args'] ?? {},
    },
  ];
}

/**
 * A tool result's text: the value of its `output` (`{type: json|text|error-json|error-text, value}`),
 * text as written and JSON compact; `result` before AI SDK 5.
 */
function resultText(p: JsonObject): string {
  const output = p['output'];
  if (isJsonObject(output ?? null) && 'value' in (output as JsonObject))
    return valueText((output as JsonObject)['value']);
  return valueText(output ?? p['result']);
}

/** One message of the SDK's prompt form: content a string, or parts (text, tool-call, tool-result). */
function message(m: JsonObject): ConversationMessage[] {
  const role = m['role'];
  const parts = Array.isArray(m['content']) ? m['content'].filter(isJsonObject) : [];
  const text =
    typeof m['content'] === 'string'
      ? m['content']
      : parts.map((p) => (p['type'] === 'text' ? valueText(p['text']) : '')).join('');
  if (role === 'system') return text ? [{ role: 'system', text }] : [];
  if (role === 'assistant')
    return [{ role, text, calls: parts.filter((p) => p['type'] === 'tool-call').flatMap(callOf) }];
  if (role === 'tool')
    return parts
      .filter((p) => p['type'] === 'tool-result')
      .map((p) => ({
        role: 'tool' as const,
        ...(typeof p['toolCallId'] === 'string' ? { callId: p['toolCallId'] } : {}),
        ...(typeof p['toolName'] === 'string' ? { name: p['toolName'] } : {}),
        text: resultText(p),
      }));
  return text ? [{ role: 'user', text }] : [];
}

/**
 * The tools a model call was offered: `ai.prompt.tools`, a list of JSON texts
 * `{type: 'function', name, description, inputSchema}`, as a list `parseTools` reads.
 */
export function vercelAiTools(attributes: JsonObject): JsonValue[] | undefined {
  const tools = attributes['ai.prompt.tools'];
  if (!Array.isArray(tools)) return undefined;
  return tools.map((t) => jsonAttribute(t, 'ai.prompt.tools') ?? null);
}

/** True for the AI SDK's span of one tool call. */
export function isVercelAiToolCall(span: OtlpSpan): boolean {
  return typeof span.attributes['ai.toolCall.name'] === 'string';
}

/** What an `ai.toolCall` span says of its call: the same fields as the GenAI conventions' tool span. */
export function vercelAiToolCall(span: OtlpSpan): {
  name: string;
  id?: JsonValue;
  arguments?: JsonValue;
  result?: JsonValue;
} {
  const a = span.attributes;
  return {
    name: a['ai.toolCall.name'] as string,
    id: a['ai.toolCall.id'],
    arguments: a['ai.toolCall.args'] ?? a['ai.toolCall.input'],
    result: a['ai.toolCall.result'] ?? a['ai.toolCall.output'],
  };
}
