import { canonicalJson } from '../../base/canonicalJson';
import type { JsonObject, JsonValue, ParseResult } from '../../base/json';
import {
  describeOutsideValue,
  isJsonObject,
  MAX_JSON_DEPTH,
  nestsDeeperThan,
} from '../../base/json';
import type { RecordedCall } from '../../env/replayRecording';
import type { ToolResultContent } from '../../fidelity/responseValue';
import { toToolDefinition } from '../../env/toolDefinitions';
import { parseStrictJson } from '../../protocol/strictJson';
import { findBlocks, removeBlocks, stripAsciiWhitespace } from '../../protocol/text';
import type { RecordedExample, ToolDefinition } from '../../protocol/types';
import { findTaskFault } from '../format/loader';
import type { CheckSpec, ReferenceTurn, UserTurn } from '../format/taskFile';
import type { ImportedTask } from './types';

/** A fault in an input record; the importer reports it and skips the record. */
export class RecordError extends Error {}

/** How an importer reads the JSON inside its records and the content of their tool answers. */
export interface ConversationReading {
  parseJson(text: string): ParseResult<JsonValue, string>;
  toolAnswer(content: string): ToolResultContent;
}

/** Standard JSON; a tool answer is its text. */
export const STANDARD_READING: ConversationReading = {
  parseJson: parseStrictJson,
  toolAnswer: (content) => ({ text: [content] }),
};

/** A conversation read from an OpenAI-chat-shaped message list. */
export interface ParsedConversation {
  system?: string;
  turns: UserTurn[];
  reference: ReferenceTurn[];
  calls: RecordedCall[];
  /** Calls per user turn, for derived checks. */
  callsByTurn: { name: string; arguments: JsonObject }[][];
}

function contentText(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (Array.isArray(content)) {
    // OpenAI content parts: keep the text parts.
    return content
      .map((p) =>
        isJsonObject(p as JsonValue) && typeof (p as JsonObject)['text'] === 'string'
          ? ((p as JsonObject)['text'] as string)
          : '',
      )
      .join('');
  }
  throw new RecordError(`${where}: "content" must be a string or a list of content parts`);
}

/** The final answer text: reasoning blocks removed. */
function answerText(text: string): string {
  return stripAsciiWhitespace(removeBlocks(text, '<think>', '</think>'));
}

interface RawCall {
  id?: string;
  name: string;
  arguments: JsonObject;
}

function parseToolCall(
  raw: unknown,
  where: string,
  parseJson: ConversationReading['parseJson'],
): RawCall {
  if (!isJsonObject(raw as JsonValue)) throw new RecordError(`${where} is not an object`);
  const call = raw as JsonObject;
  const fn = isJsonObject(call['function'] as JsonValue) ? (call['function'] as JsonObject) : call;
  const name = fn['name'];
  if (typeof name !== 'string' || !name) throw new RecordError(`${where} has no function name`);
  let args: JsonValue | undefined = fn['arguments'] ?? fn['parameters'];
  if (typeof args === 'string') {
    const parsed = parseJson(args.trim() === '' ? '{}' : args);
    if (!parsed.ok)
      throw new RecordError(
        `${where}: the arguments of ${name} are not valid JSON (${parsed.error})`,
      );
    args = parsed.value;
  }
  if (args === undefined || args === null) args = {};
  if (!isJsonObject(args))
    throw new RecordError(`${where}: the arguments of ${name} are not a JSON object`);
  return { ...(typeof call['id'] === 'string' ? { id: call['id'] } : {}), name, arguments: args };
}

/** Tool calls written inline as `<tool_call>{json}</tool_call>` blocks (Hermes/Qwen style). */
function inlineToolCalls(
  text: string,
  where: string,
  parseJson: ConversationReading['parseJson'],
): RawCall[] {
  return findBlocks(text, '<tool_call>', '</tool_call>').flatMap((b, i) => {
    const parsed = parseJson(stripAsciiWhitespace(b.inner));
    if (!parsed.ok) throw new RecordError(`${where}: tool call block ${i} is not valid JSON`);
    const items = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
    return items.map((item, k) => parseToolCall(item, `${where} tool call ${i}.${k}`, parseJson));
  });
}

/**
 * An act that did not parse, as EnvACE records it (envs.py): its text with no tool calls, then a
 * tool message named error_tool_call. It holds no call and no answer.
 */
function isUnparsedAct(m: JsonObject, next: unknown): boolean {
  const calls = m['tool_calls'];
  return !(Array.isArray(calls) && calls.length) && isParseErrorMessage(next);
}

/** The tool message envs.py writes after an act that did not parse. */
function isParseErrorMessage(m: unknown): boolean {
  return (
    isJsonObject(m as JsonValue) &&
    ['tool', 'observation'].includes((m as JsonObject)['role'] as string) &&
    (m as JsonObject)['name'] === 'error_tool_call'
  );
}

/**
 * Reads a message list (system, user, assistant with `tool_calls`, tool/observation messages) into
 * user turns, the reference solution (calls and final answer per user turn) and the recorded
 * answers. Tool answers are paired with calls by `tool_call_id` when present, else in order.
 * Throws a {@link RecordError} for what cannot be read.
 */
export function parseConversation(
  messages: unknown,
  reading: ConversationReading = STANDARD_READING,
): ParsedConversation {
  if (!Array.isArray(messages) || messages.length === 0)
    throw new RecordError('"messages" must be a non-empty list');
  const out: ParsedConversation = { turns: [], reference: [], calls: [], callsByTurn: [] };
  let pending: RawCall[] = [];
  let current: ReferenceTurn | undefined;
  const flushPending = (where: string) => {
    if (pending.length)
      throw new RecordError(
        `${where}: ${pending.map((p) => p.name).join(', ')} has no tool answer`,
      );
  };
  messages.forEach((raw, i) => {
    const where = `message ${i}`;
    if (!isJsonObject(raw as JsonValue)) throw new RecordError(`${where} is not an object`);
    const m = raw as JsonObject;
    const role = m['role'];
    if (role === 'system') {
      if (out.turns.length === 0) out.system = contentText(m['content'], where);
      return;
    }
    if (role === 'user' || role === 'human') {
      flushPending(where);
      const text = contentText(m['content'], where);
      if (!text.trim()) throw new RecordError(`${where}: a user message is empty`);
      out.turns.push({ user: text });
      current = { calls: [], answer: '' };
      out.reference.push(current);
      out.callsByTurn.push([]);
      return;
    }
    if (!current)
      throw new RecordError(
        `${where}: a message with role ${describeOutsideValue(role)} comes before the first user message`,
      );
    if (role === 'assistant' || role === 'gpt') {
      flushPending(where);
      const text = contentText(m['content'], where);
      if (isUnparsedAct(m, messages[i + 1])) return;
      const listed = Array.isArray(m['tool_calls'])
        ? (m['tool_calls'] as unknown[]).map((c, k) =>
            parseToolCall(c, `${where} tool_calls[${k}]`, reading.parseJson),
          )
        : [];
      const calls = listed.length ? listed : inlineToolCalls(text, where, reading.parseJson);
      if (calls.length) {
        pending = calls;
        for (const c of calls) {
          current.calls.push({ name: c.name, arguments: c.arguments });
          out.callsByTurn.at(-1)?.push({ name: c.name, arguments: c.arguments });
        }
      } else {
        current.answer = answerText(text);
      }
      return;
    }
    if (role === 'tool' || role === 'observation' || role === 'function') {
      if (!pending.length && isParseErrorMessage(m)) return;
      if (!pending.length) throw new RecordError(`${where}: a tool answer follows no tool call`);
      const id = m['tool_call_id'];
      let at = typeof id === 'string' ? pending.findIndex((p) => p.id === id) : 0;
      if (at < 0) at = 0;
      const call = pending.splice(at, 1)[0];
      out.calls.push({
        tool: call.name,
        arguments: call.arguments,
        response: reading.toolAnswer(contentText(m['content'], where)),
      });
      return;
    }
    throw new RecordError(`${where}: unknown role ${describeOutsideValue(role)}`);
  });
  flushPending('end of conversation');
  if (!out.turns.length) throw new RecordError('the conversation has no user message');
  return out;
}

/**
 * Tool definitions from a record: OpenAI function schemas (`{type: "function", function: {...}}`),
 * plain `{name, description, parameters}` or MCP `{name, inputSchema}`, possibly as a JSON string.
 */
export function parseTools(
  raw: unknown,
  parseJson: ConversationReading['parseJson'] = parseStrictJson,
): ToolDefinition[] {
  let value = raw;
  if (typeof value === 'string') {
    const parsed = parseJson(value);
    if (!parsed.ok) throw new RecordError(`"tools" is a string that is not JSON (${parsed.error})`);
    value = parsed.value;
  }
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new RecordError('"tools" must be a list');
  return value.map((t, i) => {
    if (!isJsonObject(t as JsonValue)) throw new RecordError(`tools[${i}] is not an object`);
    const o = t as JsonObject;
    const fn = isJsonObject(o['function'] as JsonValue) ? (o['function'] as JsonObject) : o;
    if (typeof fn['name'] !== 'string' || !fn['name'])
      throw new RecordError(`tools[${i}] has no name`);
    return toToolDefinition({
      name: fn['name'],
      description: typeof fn['description'] === 'string' ? fn['description'] : undefined,
      inputSchema: fn['parameters'] ?? fn['inputSchema'] ?? fn['input_schema'],
    });
  });
}

/** Tools for calls whose definitions the record lacks: an open object schema each. */
export function completeTools(
  tools: ToolDefinition[],
  calls: readonly { name: string }[],
): ToolDefinition[] {
  const out = tools.slice();
  for (const c of calls) {
    if (!out.some((t) => t.name === c.name))
      out.push({ name: c.name, parameters: { type: 'object', properties: {} } });
  }
  return out;
}

/**
 * Checks derived from the recorded calls, so an imported task is graded without a judge: each
 * distinct reference call is required in its user turn with the same arguments.
 */
export function derivedCallChecks(
  callsByTurn: { name: string; arguments: JsonObject }[][],
): CheckSpec[] {
  const checks: CheckSpec[] = [];
  callsByTurn.forEach((calls, turn) => {
    const seen = new Set<string>();
    calls.forEach((c) => {
      const key = c.name + canonicalJson(c.arguments);
      if (seen.has(key)) return;
      seen.add(key);
      const args = Object.fromEntries(
        Object.entries(c.arguments).map(([k, v]) => [k, { equals: v }]),
      );
      checks.push({
        id: `ref-call-t${turn}-${seen.size}`,
        kind: 'call',
        tool: c.name,
        turn,
        args,
        weight: 1,
        description: `calls ${c.name} as the recorded conversation did`,
      });
    });
  });
  return checks;
}

/** The recorded calls as few-shot pairs: results as JSON when they parse (with the text they were), else as text. */
export function examplePairs(
  calls: readonly RecordedCall[],
  parseJson: ConversationReading['parseJson'] = parseStrictJson,
): RecordedExample[] {
  return calls.map((c) => {
    const text = (c.response.text ?? []).join('\n');
    const parsed = parseJson(text);
    return parsed.ok
      ? { tool: c.tool, arguments: c.arguments, result: parsed.value, text }
      : { tool: c.tool, arguments: c.arguments, result: text };
  });
}

/** A task id from outside input: characters the id pattern allows, at most 128. */
export function safeId(raw: string): string {
  const s = raw
    .replace(/[^A-Za-z0-9._:-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 128);
  return s || 'task';
}

/**
 * An imported task as it will be written, checked by the loader's own rules: a record whose task
 * would not load (a tool name past the schema's limit, say) is a skipped record, never a task file
 * that `rehearse run` then refuses.
 */
export function loadableImport(imported: ImportedTask): ImportedTask {
  // The task's and recording's own structure holds the tool values a dozen levels down.
  if (nestsDeeperThan([imported.task, imported.recording, imported.pairs], MAX_JSON_DEPTH + 12)) {
    throw new RecordError(
      `its arguments or results nest deeper than ${MAX_JSON_DEPTH} levels; a tool value that deep is not taken`,
    );
  }
  const fault = findTaskFault(imported.task);
  if (fault)
    throw new RecordError(`the task made from it would not load: ${fault.path} ${fault.message}`);
  return imported;
}
