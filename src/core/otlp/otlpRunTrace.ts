import * as path from 'node:path';
import { writeRootOf } from '../base/writePath';
import { formatToolCalls } from '../protocol/actParser';
import { TRACE_FILE } from '../trace/format/discover';
import {
  callId as makeCallId,
  episodeId as makeEpisodeId,
  isValidId,
  newRunId,
  turnId as makeTurnId,
} from '../trace/format/ids';
import type { NewTraceEvent } from '../trace/format/schema';
import { TraceWriter } from '../trace/format/writer';
import type { ImportedOtlpEpisode } from './otlpImport';

/** The trace an OTLP import wrote. */
export interface OtlpRunTrace {
  runId: string;
  traceFile: string;
  /** Notes of calls whose producer id could not be the studio's call id. */
  notes: string[];
}

/** The `server` an imported call's actual response names. */
export const OTLP_SERVER = 'otlp';

/**
 * Writes imported episodes as one run, `<runsDir>/<runId>/trace.jsonl`: a shadow run of the
 * recorded policy with no rehearsal yet, each call's actual response the one the trace recorded, so
 * that `rehearse replay` rehearses it with any policy. A call keeps the producer's id as its call id
 * when that id is a valid studio id not used before in the run; otherwise it is numbered
 * (`e1.t1.c1`) and a note says so.
 */
export async function writeOtlpRunTrace(
  episodes: readonly ImportedOtlpEpisode[],
  runsDir: string,
  files: readonly string[],
): Promise<OtlpRunTrace> {
  const runId = newRunId('otlp');
  const traceFile = path.join(runsDir, runId, TRACE_FILE);
  const notes: string[] = [];
  const services = [...new Set(episodes.map((e) => e.episode.service ?? 'otlp'))];
  // Not synced event by event: an import interrupted by a crash is run again from its files.
  const writer = await TraceWriter.open(traceFile, { durable: false, root: writeRootOf(runsDir) });
  try {
    await writer.append({
      type: 'run',
      runId,
      mode: 'shadow',
      policy: { kind: 'recorded', id: services.join(', ') },
      tasks: episodes.map((e) => e.imported.task.id),
      settings: { source: 'otlp', files: files.map((f) => path.basename(f)) },
    });
    const used = new Set<string>();
    // The writer appends in order; waiting on each event would only add a turn of the loop per line.
    const appended: Promise<void>[] = [];
    for (const [index, e] of episodes.entries())
      for (const event of episodeEvents(e, index, used, notes)) appended.push(writer.append(event));
    appended.push(writer.append({ type: 'run.end', runId, status: 'completed' }));
    await Promise.all(appended);
  } finally {
    await writer.close();
  }
  return { runId, traceFile, notes };
}

function episodeEvents(
  { episode, imported }: ImportedOtlpEpisode,
  index: number,
  used: Set<string>,
  notes: string[],
): NewTraceEvent[] {
  const episodeId = makeEpisodeId(index);
  const instruction = episode.turns.find((t) => t.user !== undefined)?.user;
  const events: NewTraceEvent[] = [
    {
      type: 'episode',
      episodeId,
      index,
      taskId: imported.task.id,
      mode: 'shadow',
      ...(instruction !== undefined ? { instruction } : {}),
      ...(episode.system !== undefined ? { system: episode.system } : {}),
      ...(imported.recording.tools.length ? { tools: imported.recording.tools } : {}),
    },
  ];
  for (const [t, turn] of episode.turns.entries()) {
    const turnId = makeTurnId(episodeId, t);
    const ids = turn.calls.map((c, k) => {
      if (c.id !== undefined && isValidId(c.id) && !used.has(c.id)) {
        used.add(c.id);
        return c.id;
      }
      const id = makeCallId(turnId, k);
      if (c.id !== undefined)
        notes.push(
          `trace ${episode.traceId}: call id ${JSON.stringify(c.id.slice(0, 140))} is ${isValidId(c.id) ? 'used twice' : 'not a valid studio id'}; the call is ${id}`,
        );
      return id;
    });
    events.push({
      type: 'turn',
      episodeId,
      turnId,
      index: t,
      ...(turn.user !== undefined ? { user: turn.user } : {}),
      text: turn.calls.length ? turn.text + formatToolCalls(turn.calls) : turn.text,
      parse: turn.calls.length
        ? {
            kind: 'calls',
            calls: turn.calls.map((c, k) => ({
              callId: ids[k],
              name: c.name,
              arguments: c.arguments,
            })),
          }
        : turn.parseError
          ? { kind: 'error', ...turn.parseError }
          : { kind: 'final', answer: turn.text.trim() },
    });
    for (const [k, c] of turn.calls.entries())
      events.push({
        type: 'call.actual',
        episodeId,
        turnId,
        callId: ids[k],
        tool: c.name,
        source: 'replay',
        server: OTLP_SERVER,
        response: {
          text: [c.result ?? ''],
          ...(c.isError !== undefined ? { isError: c.isError } : {}),
        },
      });
  }
  events.push({
    type: 'episode.end',
    episodeId,
    status: episode.answer !== undefined ? 'completed' : 'limit',
    reward: null,
    success: null,
    ...(episode.answer !== undefined ? { answer: episode.answer } : {}),
  });
  return events;
}
