import * as path from 'node:path';
import type { JsonObject } from '../base/json';
import { RecordError } from '../tasks/import/conversation';
import { importChatRecord } from '../tasks/import/chat';
import type { ImportedTask, ImportResult } from '../tasks/import/types';
import type { OtlpFault } from './codes';
import type { OtlpEpisode } from './episodeTypes';
import { episodeOfTrace } from './otlpEpisodes';
import type { OtlpData } from './otlpJson';
import { groupTraces } from './otlpTraces';

/** An imported episode with the task made of it. */
export interface ImportedOtlpEpisode {
  episode: OtlpEpisode;
  imported: ImportedTask;
}

/** What OTLP data gave: episodes with their tasks, the import result for the writer, and the faults. */
export interface OtlpImport {
  episodes: ImportedOtlpEpisode[];
  /** The tasks, replay recordings and few-shot pairs, as `import chat` makes them. */
  result: ImportResult;
  faults: OtlpFault[];
}

/**
 * One episode per OTLP trace, each also a task with its replay recording made by the same importer
 * as `import chat` (the conversation written as an OpenAI-chat record, the recovered answers and
 * error flags in it). Traces that give no episode become faults; `data.faults` come first.
 */
export function importOtlpData(data: OtlpData): OtlpImport {
  const out: OtlpImport = { episodes: [], result: { tasks: [], skipped: [] }, faults: [] };
  const traces = groupTraces(data);
  out.faults.push(...data.faults);
  const usedIds = new Set<string>();
  traces.forEach((trace, index) => {
    const episode = episodeOfTrace(trace, out.faults);
    if (!('turns' in episode)) {
      out.faults.push(episode);
      return;
    }
    try {
      const imported = importChatRecord(chatRecord(episode), index, usedIds, {
        prefix: 'otlp',
        description: `Imported from ${path.basename(episode.file)}, OTLP trace ${episode.traceId}.`,
        source: `${path.basename(episode.file)}#${episode.traceId}`,
      });
      // The recording's calls are the tool answers in the order chatRecord wrote them.
      const calls = episode.turns.flatMap((t) => t.calls);
      imported.recording.calls.forEach((c, k) => {
        const isError = calls[k]?.isError;
        if (isError !== undefined) c.response = { ...c.response, isError };
      });
      out.episodes.push({ episode, imported });
      out.result.tasks.push(imported);
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      out.faults.push({
        code: 'OTLP_CONVERSATION_INVALID',
        file: episode.file,
        line: episode.line,
        traceId: episode.traceId,
        message: `trace ${episode.traceId}: ${err.message}`,
      });
    }
  });
  return out;
}

/** The episode as an OpenAI-chat record: what `import chat` reads. */
function chatRecord(episode: OtlpEpisode): JsonObject {
  const messages: JsonObject[] = [];
  if (episode.system !== undefined) messages.push({ role: 'system', content: episode.system });
  for (const turn of episode.turns) {
    if (turn.user !== undefined) messages.push({ role: 'user', content: turn.user });
    messages.push({
      role: 'assistant',
      content: turn.text,
      ...(turn.calls.length
        ? {
            tool_calls: turn.calls.map((c) => ({
              ...(c.id !== undefined ? { id: c.id } : {}),
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : {}),
    });
    // A broken call as EnvACE records it: the import skips the act, as the runner's replay does.
    if (turn.parseError)
      messages.push({ role: 'tool', name: 'error_tool_call', content: turn.parseError.message });
    for (const c of turn.calls)
      messages.push({
        role: 'tool',
        ...(c.id !== undefined ? { tool_call_id: c.id } : {}),
        content: c.result ?? '',
      });
  }
  return {
    id: episode.traceId,
    messages,
    tools: episode.tools.map((t) => ({
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: t.parameters as JsonObject,
    })),
  };
}
