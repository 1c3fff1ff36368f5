import type { JsonObject, JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import type { ConversationMessage, MessageCall } from './genaiMessages';

/**
 * OpenInference's flattened messages (`llm.input_messages.<i>.message.role`, `.content`,
 * `.contents.<k>.message_content.text`, `.tool_calls.<k>.tool_call.{id, function.name,
 * function.arguments}`, `.tool_call_id`) under `prefix`, in index order. Arize's instrumentations
 * (OpenAI Agents SDK, LangChain, LlamaIndex, ...) write them instead of the GenAI conventions.
 */
export function openInferenceMessages(
  attributes: JsonObject,
  prefix: 'llm.input_messages' | 'llm.output_messages',
): ConversationMessage[] {
  const messages = nested(attributes, prefix + '.');
  return Object.keys(messages)
    .filter((k) => /^\d+$/.test(k))
    .sort((a, b) => Number(a) - Number(b))
    .flatMap((k) => {
      const m = (messages[k] as JsonObject)['message'];
      return isJsonObject(m ?? null) ? [message(m as JsonObject)] : [];
    });
}

/** Flattened keys under `prefix` as nested objects: `a.0.b` → `{a: {0: {b}}}`. */
function nested(attributes: JsonObject, prefix: string): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (!key.startsWith(prefix)) continue;
    const path = key.slice(prefix.length).split('.');
    let at = out;
    for (const part of path.slice(0, -1)) {
      const next = at[part];
      at = isJsonObject(next ?? null) ? (next as JsonObject) : (at[part] = {});
    }
    at[path[path.length - 1]] = value;
  }
  return out;
}

function indexed(v: JsonValue | undefined): JsonObject[] {
  if (!isJsonObject(v ?? null)) return [];
  const o = v as JsonObject;
  return Object.keys(o)
    .filter((k) => /^\d+$/.test(k))
    .sort((a, b) => Number(a) - Number(b))
    .flatMap((k) => (isJsonObject(o[k]) ? [o[k]] : []));
}

function message(m: JsonObject): ConversationMessage {
  const role = typeof m['role'] === 'string' ? m['role'] : 'user';
  const text =
    typeof m['content'] === 'string'
      ? m['content']
      : indexed(m['contents'])
          .map((c) => {
            const part = c['message_content'];
            return isJsonObject(part ?? null) && typeof (part as JsonObject)['text'] === 'string'
              ? ((part as JsonObject)['text'] as string)
              : '';
          })
          .join('');
  if (role === 'assistant' || role === 'model') {
    const calls: MessageCall[] = indexed(m['tool_calls']).flatMap((c) => {
      const call = isJsonObject(c['tool_call'] ?? null) ? (c['tool_call'] as JsonObject) : c;
      const fn = isJsonObject(call['function'] ?? null) ? (call['function'] as JsonObject) : call;
      if (typeof fn['name'] !== 'string') return [];
      return [
        {
          ...(typeof call['id'] === 'string' ? { id: call['id'] } : {}),
          name: fn['name'],
          arguments: fn['arguments'] ?? {},
        },
      ];
    });
    return { role: 'assistant', text, calls };
  }
  if (role === 'tool' || role === 'function')
    return {
      role: 'tool',
      ...(typeof m['tool_call_id'] === 'string' ? { callId: m['tool_call_id'] } : {}),
      text,
    };
  return { role: role === 'system' || role === 'developer' ? 'system' : 'user', text };
}
