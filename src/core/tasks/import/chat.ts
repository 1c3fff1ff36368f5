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
      const imported = loadableImport(importLine(parsed.value, index, sourceName, usedIds));
      // Only a record that is imported takes its id: a skipped one leaves it to the next.
      usedIds.add(imported.task.id);
      result.tasks.push(imported);
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      result.skipped.push({ index, reason: err.message });
    }
  }
  return result;
}

function importLine(
  value: JsonValue,
  index: number,
  sourceName: string,
  usedIds: Set<string>,
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
    `chat-${typeof rawId === 'string' || typeof rawId === 'number' ? rawId : index}`,
  );
  let id = base;
  for (let k = 2; usedIds.has(id); k++) id = `${base}-${k}`;
  return {
    index,
    task: {
      version: 1,
      id,
      description: `Imported from ${sourceName}, line ${index + 1}.`,
      tags: ['imported', 'chat'],
      ...(conversation.system ? { system: conversation.system } : {}),
      turns: conversation.turns,
      servers: { recorded: { replay: `../recordings/${id}.replay.json` } },
      tools: tools.map((t) => t.name),
      checks: derivedCallChecks(conversation.callsByTurn),
      reference: { turns: conversation.reference },
    },
    recording: { version: 1, source: `${sourceName}#${index}`, tools, calls: conversation.calls },
    pairs: examplePairs(conversation.calls),
  };
}
