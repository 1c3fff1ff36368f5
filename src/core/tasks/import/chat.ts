import type { JsonObject, JsonValue } from '../../base/json';
import { isJsonObject } from '../../base/json';
import { parseStrictJson } from '../../protocol/strictJson';
import {
  RecordError,
  completeTools,
  derivedCallChecks,
  examplePairs,
  loadableImport,
  parseConversation,
  parseTools,
  safeId,
} from './conversation';
import type { ImportResult, ImportedTask } from './types';

/**
 * Reads recorded OpenAI-chat conversations, one JSON object per line: `messages` (system, user,
 * assistant with `tool_calls`, `tool` answers with `tool_call_id`), optional `tools` (function
 * schemas), optional `id`. Lines that cannot be read are reported (by 0-based line index among the
 * non-empty lines) and skipped.
 */
export function importChatText(text: string, sourceName: string): ImportResult {
  const result: ImportResult = { tasks: [], skipped: [] };
  const usedIds = new Set<string>();
  const lines = text.split('\n');
  let index = -1;
  for (const line of lines) {
    if (line.trim() === '') continue;
    index++;
    try {
      const parsed = parseStrictJson(line.trim());
      if (!parsed.ok) throw new RecordError(`the line is not valid JSON (${parsed.error})`);
      result.tasks.push(
        importChatRecord(parsed.value, index, usedIds, {
          prefix: 'chat',
          description: `Imported from ${sourceName}, line ${index + 1}.`,
          source: `${sourceName}#${index}`,
        }),
      );
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      result.skipped.push({ index, reason: err.message });
    }
  }
  return result;
}

/** Where an OpenAI-chat record came from, as its task and recording say it. */
export interface ChatRecordOrigin {
  /** The task id's prefix and tag (`chat`, `otlp`). */
  prefix: string;
  /** The task's description. */
  description: string;
  /** The recording's `source`. */
  source: string;
}

/**
 * One OpenAI-chat record (`messages`, optional `tools` and `id`) as a task, its replay recording
 * and its few-shot pairs, checked by the loader's rules; the task's id (`<prefix>-<id or index>`,
 * made unique against `usedIds`) is added to `usedIds`. Throws a {@link RecordError} for a record
 * that cannot be imported.
 */
export function importChatRecord(
  value: JsonValue,
  index: number,
  usedIds: Set<string>,
  origin: ChatRecordOrigin,
): ImportedTask {
  const imported = loadableImport(recordTask(value, index, usedIds, origin));
  // Only a record that is imported takes its id: a skipped one leaves it to the next.
  usedIds.add(imported.task.id);
  return imported;
}

function recordTask(
  value: JsonValue,
  index: number,
  usedIds: Set<string>,
  origin: ChatRecordOrigin,
): ImportedTask {
  if (!isJsonObject(value)) throw new RecordError('the line is not a JSON object');
  const record = value as JsonObject;
  const conversation = parseConversation(record['messages']);
  if (!conversation.calls.length)
    throw new RecordError('the conversation has no tool call, so there is nothing to replay');
  const tools = completeTools(
    parseTools(record['tools']),
    conversation.calls.map((c) => ({ name: c.tool })),
  );
  const rawId = record['id'] ?? record['uuid'] ?? record['conversation_id'];
  const base = safeId(
    `${origin.prefix}-${typeof rawId === 'string' || typeof rawId === 'number' ? rawId : index}`,
  );
  let id = base;
  for (let k = 2; usedIds.has(id); k++) id = `${base}-${k}`;
  return {
    index,
    task: {
      version: 1,
      id,
      description: origin.description,
      tags: ['imported', origin.prefix],
      ...(conversation.system ? { system: conversation.system } : {}),
      turns: conversation.turns,
      servers: { recorded: { replay: `../recordings/${id}.replay.json` } },
      tools: tools.map((t) => t.name),
      checks: derivedCallChecks(conversation.callsByTurn),
      reference: { turns: conversation.reference },
    },
    recording: { version: 1, source: origin.source, tools, calls: conversation.calls },
    pairs: examplePairs(conversation.calls),
  };
}
