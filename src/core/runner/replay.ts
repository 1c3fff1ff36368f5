import * as path from 'node:path';
import { StudioError, errorMessage } from '../base/errors';
import type { JsonValue } from '../base/json';
import { buildRehearsePrompt } from '../protocol/rehearsePrompt';
import type { ChatMessage, RecordedExample, ToolDefinition } from '../protocol/types';
import type { Policy } from '../policy/types';
import { fidelityEventFor } from '../trace/index/callView';
import { TRACE_FILE } from '../trace/format/discover';
import { assertValidId, compareIds, newRunId } from '../trace/format/ids';
import { readTraceEvents } from '../trace/format/reader';
import type {
  CallActualEvent,
  CallRehearsalEvent,
  EpisodeEvent,
  NewTraceEvent,
  TraceEvent,
  TurnEvent,
} from '../trace/format/schema';
import { rehearsalResult } from '../trace/format/schema';
import { TraceWriter } from '../trace/format/writer';
import { isParseDialect } from '../protocol/dialect';
import { rehearsalParseIn } from './parseDialect';
import type { RunSettings } from './settings';
import { withDefaults } from './settings';
import { actualEventToolText } from './toolMessages';
import type { RunSummary } from './runner';
import { forEachConcurrent, MAX_CONCURRENCY } from './concurrency';
import { writeRootOf } from '../base/writePath';

/** What a replay needs. */
export interface ReplayOptions {
  /** The recorded trace whose calls are rehearsed again. */
  source: string;
  runsDir: string;
  runId?: string;
  policy: Policy;
  settings?: Partial<RunSettings>;
  /** Few-shot examples for the rehearse prompt, by task id (from the task files, when known). */
  examples?: (taskId: string) => RecordedExample[] | undefined;
  signal?: AbortSignal;
  onProgress?: (p: { done: number; total: number; callId: string }) => void;
  /** Episodes replayed at once (default 1); their events interleave in the new trace. */
  concurrency?: number;
}

/**
 * Replay: re-runs only the rehearse role of a (new) policy on every call of a recorded trace, with
 * the conversation as it was recorded, and scores it against the recorded actual responses. No tool
 * is executed; it measures a checkpoint's world-model fidelity offline.
 */
export async function replayTrace(options: ReplayOptions): Promise<RunSummary> {
  // The id names the run's folder: one that could leave the runs folder is refused before anything else.
  if (options.runId !== undefined) assertValidId(options.runId, 'run');
  if (options.policy.rehearses === false)
    throw new StudioError(
      'USAGE',
      `The ${options.policy.info.kind} policy does not rehearse; replay needs a model folder or an endpoint.`,
    );
  const recorded = await readRecorded(options);

  const runId = options.runId ?? newRunId('replay');
  const traceFile = path.join(options.runsDir, runId, TRACE_FILE);
  const writer = await TraceWriter.open(traceFile, { root: writeRootOf(options.runsDir) });
  const emit = async (e: NewTraceEvent): Promise<TraceEvent> => {
    const full = { v: 1, ts: new Date().toISOString(), ...e } as TraceEvent;
    await writer.append(full);
    return full;
  };
  try {
    return await replayInto(options, recorded, { runId, traceFile, emit });
  } catch (err) {
    // A trace that can no longer be written (a full disk): the replay fails with the writer's coded
    // error, and the trace ends at its last whole event.
    const lost = writer.writeFailure;
    if (!lost) throw err;
    const error = { code: lost.code, message: lost.message };
    return { runId, traceFile, status: 'failed', episodes: [], error };
  } finally {
    await writer.close().catch(() => undefined);
  }
}

/** {@link replayTrace} once its trace is open: the run event, every episode, the run's end. */
async function replayInto(
  options: ReplayOptions,
  recorded: RecordedTrace,
  out: { runId: string; traceFile: string; emit: Replay['emit'] },
): Promise<RunSummary> {
  const { runId, traceFile, emit } = out;
  const { settings } = recorded;
  await emit({
    type: 'run',
    runId,
    mode: 'replay',
    policy: options.policy.info,
    source: path.resolve(options.source),
    settings: settings as unknown as Record<string, never>,
  });

  const replay: Replay = { options, recorded, emit, done: 0 };
  // Each recorded episode is replayed as a whole, `concurrency` at a time, in the run's planned
  // order; the summaries keep that order.
  const groups = episodeGroups(recorded.events);
  const summaries: (RunSummary['episodes'][number] | undefined)[] = [];
  let status: RunSummary['status'] = 'completed';
  let error: RunSummary['error'];
  await forEachConcurrent(
    groups,
    Math.max(1, Math.min(options.concurrency ?? 1, MAX_CONCURRENCY)),
    async (events, index) => {
      const episode: EpisodeReplay = { tools: [], messages: [] };
      try {
        for (const e of events) {
          if (options.signal?.aborted) throw new Error('The replay was stopped.');
          const ended = await replayEvent(replay, episode, e);
          if (ended) summaries[index] = ended;
        }
        // A recorded trace that stops inside an episode (a crashed run): its replay ends it too.
        if (episode.started) {
          await emit({
            type: 'episode.end',
            episodeId: episode.started.episodeId,
            status: 'failed',
            reward: null,
            success: null,
            error: {
              code: 'NO_RECORDED_END',
              message: 'The recorded trace ends before this episode did.',
            },
          });
          options.policy.endSession(`${episode.started.episodeId}:rehearse`);
        }
      } catch (err) {
        const aborted = !!options.signal?.aborted;
        const why = {
          code: aborted ? 'CANCELLED' : err instanceof StudioError ? err.code : 'REPLAY_FAILED',
          message: aborted ? 'The replay was stopped.' : errorMessage(err),
        };
        if (aborted) status = 'cancelled';
        else if (status !== 'failed') {
          status = 'failed';
          error = why;
        }
        // The episode being replayed ends with it, so that every episode of the trace has its end.
        if (episode.started) {
          await emit({
            type: 'episode.end',
            episodeId: episode.started.episodeId,
            status: aborted ? 'cancelled' : 'failed',
            reward: null,
            success: null,
            error: why,
          });
          options.policy.endSession(`${episode.started.episodeId}:rehearse`);
        }
      }
    },
    () => status !== 'completed' || !!options.signal?.aborted,
  );
  if (status === 'completed' && options.signal?.aborted) status = 'cancelled';
  const episodes = summaries.filter((e): e is RunSummary['episodes'][number] => !!e);
  await emit({ type: 'run.end', runId, status, ...(error ? { error } : {}) });
  return { runId, traceFile, status, episodes, ...(error ? { error } : {}) };
}

/** The recorded trace, read: its events, its actual responses by call and the replay's settings. */
interface RecordedTrace {
  events: TraceEvent[];
  settings: RunSettings;
  actuals: Map<string, CallActualEvent>;
  /** Calls to replay, for progress. */
  total: number;
}

/** Reads the recorded trace (refused without a run event) and settles the replay's settings. */
async function readRecorded(options: ReplayOptions): Promise<RecordedTrace> {
  const { events, skippedCount } = await readTraceEvents(options.source);
  const source = events.find((e) => e.type === 'run');
  if (!source)
    throw new StudioError(
      'TRACE_EMPTY',
      `${options.source} has no run event${skippedCount ? ` (${skippedCount} lines skipped)` : ''}; it cannot be replayed.`,
    );
  // Rehearsals are parsed as the recorded run parsed them, unless the caller names a dialect.
  const recordedDialect = (source.settings as { parse?: unknown } | undefined)?.parse;
  const parse =
    options.settings?.parse ?? (isParseDialect(recordedDialect) ? recordedDialect : 'studio');
  const settings = withDefaults({ ...options.settings, parse, mode: 'replay' });
  const actuals = new Map<string, CallActualEvent>();
  for (const e of events) if (e.type === 'call.actual') actuals.set(e.callId, e);
  const total = events
    .filter((e) => e.type === 'turn')
    .reduce(
      (n, t) => n + (t.type === 'turn' && t.parse.kind === 'calls' ? t.parse.calls.length : 0),
      0,
    );
  return { events, settings, actuals, total };
}

/** What every episode of a replay shares: its options, the recorded trace, the writer, calls done. */
interface Replay {
  options: ReplayOptions;
  recorded: RecordedTrace;
  emit: (event: NewTraceEvent) => Promise<TraceEvent>;
  done: number;
}

/** One episode being replayed: its start, its tools and its conversation so far. */
interface EpisodeReplay {
  started?: EpisodeEvent;
  tools: ToolDefinition[];
  messages: ChatMessage[];
}

/**
 * The recorded events of each episode, episodes in the run's planned order ({@link compareIds}: the
 * recorded events of episodes played at once interleave); events of no known episode are left out.
 */
function episodeGroups(events: readonly TraceEvent[]): TraceEvent[][] {
  const groups = new Map<string, TraceEvent[]>();
  for (const e of events) {
    if (e.type === 'episode') groups.set(e.episodeId, [e]);
    else if ('episodeId' in e && e.type !== 'fidelity') groups.get(e.episodeId)?.push(e);
  }
  return [...groups.entries()].sort(([a], [b]) => compareIds(a, b)).map(([, g]) => g);
}

/**
 * Replays one recorded event of an episode: its start, turns and end are copied, each call of a turn
 * is rehearsed again. Returns the episode's summary at its end.
 */
async function replayEvent(
  replay: Replay,
  episode: EpisodeReplay,
  e: TraceEvent,
): Promise<RunSummary['episodes'][number] | undefined> {
  const { options, emit } = replay;
  switch (e.type) {
    case 'episode':
      episode.started = e;
      episode.tools = e.tools ?? [];
      episode.messages = [];
      await emit({ ...strip(e) });
      return undefined;
    case 'turn': {
      if (!episode.started) return undefined;
      await emit({ ...strip(e) });
      const { messages } = episode;
      if (e.user !== undefined) messages.push({ role: 'user', content: e.user });
      const history = [...messages];
      messages.push({ role: 'assistant', content: e.text });
      if (e.parse.kind !== 'calls') return undefined;
      for (const call of e.parse.calls) {
        await replayCall(replay, episode, e, call, history);
        options.onProgress?.({
          done: ++replay.done,
          total: replay.recorded.total,
          callId: call.callId,
        });
      }
      return undefined;
    }
    case 'episode.end': {
      const started = episode.started;
      if (!started) return undefined;
      await emit({ ...strip(e) });
      options.policy.endSession(`${e.episodeId}:rehearse`);
      episode.started = undefined;
      return {
        episodeId: e.episodeId,
        taskId: started.taskId,
        status: e.status,
        reward: e.reward,
        success: e.success,
      };
    }
    default:
      return undefined;
  }
}

/** Rehearses one recorded call again, scores it against the recorded actual response, and adds that response to the conversation. */
async function replayCall(
  replay: Replay,
  episode: EpisodeReplay,
  turn: TurnEvent,
  call: { callId: string; name: string; arguments: JsonValue },
  history: ChatMessage[],
): Promise<void> {
  const { options, emit } = replay;
  const { settings, actuals } = replay.recorded;
  const prompt = buildRehearsePrompt(
    {
      tools: episode.tools,
      examples: options.examples?.(episode.started!.taskId),
      history,
      latestText: turn.text,
      call: { name: call.name, arguments: call.arguments },
    },
    settings.rehearsePrompt,
  );
  const r = await options.policy.rehearse({
    messages: prompt,
    n: settings.rehearsalSamples,
    session: `${turn.episodeId}:rehearse`,
    sampling: settings.sampling.rehearse,
    maxTokens: settings.maxTokens.rehearse,
    signal: options.signal,
  });
  const sample = { ...r.samples[0], parse: rehearsalParseIn(r.samples[0], settings.parse) };
  const rehearsal = (await emit({
    type: 'call.rehearsal',
    episodeId: turn.episodeId,
    turnId: turn.turnId,
    callId: call.callId,
    tool: call.name,
    arguments: call.arguments,
    text: sample.text,
    result: rehearsalResult(sample.parse),
    tokens: r.tokens,
    latencyMs: Math.round(r.latencyMs),
  })) as CallRehearsalEvent;
  const recorded = actuals.get(call.callId);
  const actual = (await emit(
    recorded
      ? { ...strip(recorded), source: 'replay' }
      : {
          type: 'call.actual',
          episodeId: turn.episodeId,
          turnId: turn.turnId,
          callId: call.callId,
          tool: call.name,
          source: 'replay',
          error: {
            code: 'NO_RECORDED_ANSWER',
            message: 'The recorded trace has no actual response for this call.',
          },
        },
  )) as CallActualEvent;
  await emit(fidelityEventFor(rehearsal, actual));
  episode.messages.push({ role: 'tool', name: call.name, content: actualEventToolText(actual) });
}

function strip<E extends TraceEvent>(e: E): Omit<E, 'v' | 'ts'> {
  const { v: _v, ts: _ts, ...rest } = e;
  return rest;
}
