import type { JsonObject, JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import type { OtlpEvent } from './otlpJson';

/** A tool call as a conversation shows it: the producer's id, the name, the arguments as written. */
export interface MessageCall {
  id?: string;
  name: string;
  /** An object, or the JSON text the producer wrote. */
  arguments: JsonValue;
}

/** One message of a GenAI conversation, whichever convention it was written in. */
export type ConversationMessage =
  | { role: 'system' | 'user'; text: string }
  | { role: 'assistant'; text: string; calls: MessageCall[] }
  | { role: 'tool'; callId?: string; name?: string; text: string };

/** A value that should be JSON but is not: the caller reports it. */
export class MessageNotJson extends Error {}

/** Text of a value that is text, or the JSON of one that is not. */
export function valueText(v: JsonValue | undefined): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** An attribute that holds JSON: the value itself when the producer wrote structure, parsed text otherwise. */
export function jsonAttribute(v: JsonValue | undefined, what: string): JsonValue | undefined {
  if (v === undefined || typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as JsonValue;
  } catch {
    throw new MessageNotJson(`${what} is not JSON`);
  }
}

/** Content as text: a string, OpenAI's content parts (their text), or a GenAI part list. */
function contentText(v: JsonValue | undefined): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v))
    return v
      .map((p) =>
        isJsonObject(p) && typeof (p['text'] ?? p['content']) === 'string'
          ? ((p['text'] ?? p['content']) as string)
          : '',
      )
      .join('');
  return valueText(v);
}

/**
 * The current conventions' messages (`gen_ai.input.messages`, `gen_ai.output.messages`,
 * `gen_ai.system_instructions`): `{role, parts: [{type: text|tool_call|tool_call_response, ...}]}`.
 * A tool call response is a tool message whatever role carries it (Pydantic AI sends them as user).
 */
export function currentMessages(value: JsonValue | undefined, what: string): ConversationMessage[] {
  const parsed = jsonAttribute(value, what);
  if (parsed === undefined) return [];
  if (!Array.isArray(parsed)) throw new MessageNotJson(`${what} is not a list of messages`);
  const out: ConversationMessage[] = [];
  for (const m of parsed) {
    if (!isJsonObject(m)) throw new MessageNotJson(`${what} holds a message that is not an object`);
    const role = typeof m['role'] === 'string' ? m['role'] : 'user';
    const parts = Array.isArray(m['parts'])
      ? m['parts'].filter(isJsonObject)
      : [{ type: 'text', content: m['content'] ?? '' }];
    let text = '';
    const calls: MessageCall[] = [];
    for (const p of parts) {
      const type = p['type'];
      if (type === 'text') text += contentText(p['content']);
      else if (type === 'tool_call' && typeof p['name'] === 'string')
        calls.push({
          ...(typeof p['id'] === 'string' ? { id: p['id'] } : {}),
          name: p['name'],
          arguments: p['arguments'] ?? {},
        });
      else if (type === 'tool_call_response')
        out.push({
          role: 'tool',
          ...(typeof p['id'] === 'string' ? { callId: p['id'] } : {}),
          ...(typeof p['name'] === 'string' ? { name: p['name'] } : {}),
          text: valueText(p['response'] ?? p['result']),
        });
    }
    if (role === 'assistant') {
      if (text || calls.length) out.push({ role: 'assistant', text, calls });
    } else if (role === 'system' || role === 'developer') {
      if (text) out.push({ role: 'system', text });
    } else if (role === 'tool') {
      // Tool messages are their parts, pushed above; a tool message with text only answers in order.
      if (text && !parts.some((p) => p['type'] === 'tool_call_response'))
        out.push({ role: 'tool', text });
    } else if (text) out.push({ role: 'user', text });
  }
  return out;
}

/** The older conventions' event names, and the message each one is. */
const EVENT_ROLES: Record<string, ConversationMessage['role'] | 'choice'> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
  'gen_ai.choice': 'choice',
};

/** True for an event of the older conventions' message events. */
export function isMessageEvent(e: OtlpEvent): boolean {
  return e.name in EVENT_ROLES;
}

function openaiCalls(v: JsonValue | undefined, what: string): MessageCall[] {
  const parsed = jsonAttribute(v, what);
  if (!Array.isArray(parsed)) return [];
  return parsed.filter(isJsonObject).flatMap((c) => {
    const fn = isJsonObject(c['function']) ? c['function'] : c;
    if (typeof fn['name'] !== 'string') return [];
    return [
      {
        ...(typeof c['id'] === 'string' ? { id: c['id'] } : {}),
        name: fn['name'],
        arguments: fn['arguments'] ?? {},
      },
    ];
  });
}

/**
 * The older conventions' messages: `gen_ai.system.message`, `gen_ai.user.message`,
 * `gen_ai.assistant.message`, `gen_ai.tool.message` and `gen_ai.choice`, as span events or as log
 * records of the span, in time order. Their fields are the log record's body, or the event's
 * attributes.
 */
export function eventMessages(events: readonly OtlpEvent[]): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  for (const e of events) {
    const role = EVENT_ROLES[e.name];
    if (!role) continue;
    const fields: JsonObject = isJsonObject(e.body ?? null) ? (e.body as JsonObject) : e.attributes;
    const where = `${e.name} event`;
    if (role === 'choice') {
      const message = jsonAttribute(fields['message'], `${where} message`);
      if ((fields['index'] ?? 0) !== 0 || !isJsonObject(message ?? null)) continue;
      const m = message as JsonObject;
      out.push({
        role: 'assistant',
        text: contentText(m['content']),
        calls: openaiCalls(m['tool_calls'], `${where} tool_calls`),
      });
    } else if (role === 'assistant')
      out.push({
        role,
        text: contentText(fields['content']),
        calls: openaiCalls(fields['tool_calls'], `${where} tool_calls`),
      });
    else if (role === 'tool')
      out.push({
        role,
        ...(typeof fields['id'] === 'string' ? { callId: fields['id'] } : {}),
        text: contentText(fields['content']),
      });
    else out.push({ role, text: contentText(fields['content']) });
  }
  return out;
}
