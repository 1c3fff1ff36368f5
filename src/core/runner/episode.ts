import { StudioError, errorMessage } from '../base/errors';
import type { JsonValue } from '../base/json';
import type { Environment, EnvironmentSnapshot } from '../env/types';
import type { Grade, GradeOptions } from '../tasks/checks/grade';
import { gradeEpisode, gradeOfFailedEpisode, scoreVerdicts } from '../tasks/checks/grade';
import type { EpisodeTranscript, TranscriptCall, TranscriptTurn } from '../tasks/checks/transcript';
import type { TaskFile } from '../tasks/taskFile';
import { DEFAULT_TASK_LIMITS } from '../tasks/taskFile';
import { buildRehearsePrompt } from '../protocol/rehearsePrompt';
import type { ChatMessage, ToolDefinition } from '../protocol/types';
import type { Policy, RehearsalSample } from '../policy/types';
import { fidelityEventFor } from '../trace/index/callView';
import { callId as makeCallId, turnId as makeTurnId } from '../trace/format/ids';
import type { CallActualEvent, CallRehearsalEvent, EpisodeStatus, NewTraceEvent, RunMode, TraceEvent, TurnParse } from '../trace/format/schema';
import { EnvaceGrader, envaceToolFailure, NO_REAL_STATE } from './envaceGrading';
import { actParseIn, envaceEpisodeCode, envaceToolError, rehearsalParseIn } from './parseDialect';
import type { RunSettings } from './settings';
import { actualEventToolText, actualToolText, PARSE_ERROR_TOOL_NAME, parseErrorToolText, rehearsedToolResult, simulatorErrorText } from './toolMessages';

/** Writes one event of the run (the run's trace writer, plus live listeners). */
export type EmitEvent = (event: NewTraceEvent) => Promise<TraceEvent>;

/** Progress inside an episode, for progress bars and status bars. */
export interface EpisodeProgress {
  episodeId: string;
  turns: number;
  calls: number;
}

/** What one episode needs. */
export interface EpisodeContext {
  task: TaskFile;
  episodeId: string;
  index: number;
  /** `shadow`: continue on actual responses; `imagine`: on rehearsals. */
  mode: Extract<RunMode, 'shadow' | 'imagine'>;
  /** Private rehearsal's part, recorded on the episode. */
  role?: 'imagined' | 'committed';
  policy: Policy;
  /** Required in shadow mode and for imagine with audit; in imagine mode it only lists the tools. */
  env?: Environment;
  /** Imagine mode without an environment: the tools to offer (listed once for several episodes). */
  tools?: ToolDefinition[];
  settings: RunSettings;
  emit: EmitEvent;
  grade?: GradeOptions;
  /** Text appended to the task's system prompt (private rehearsal's memory, or earlier attempts). */
  systemSuffix?: string;
  /** Private rehearsal's memory, recorded on the episode's end. */
  memory?: string;
  signal?: AbortSignal;
  onProgress?: (p: EpisodeProgress) => void;
}

/** An episode's outcome. */
export interface EpisodeOutcome {
  status: EpisodeStatus;
  grade?: Grade;
  transcript: EpisodeTranscript;
  error?: { code: string; message: string };
  /** The policy failed for good (its process died): the run cannot go on. */
  fatal: boolean;
}

/** Errors after which the policy cannot serve the next episode either: the run stops. */
const POLICY_GONE = new Set(['POLICY_HOST_CRASHED', 'POLICY_HOST_OUT_OF_MEMORY', 'POLICY_HOST_ERROR', 'ENDPOINT_UNREACHABLE', 'ENDPOINT_AUTH']);

class EpisodeEnd extends Error {
  constructor(readonly status: EpisodeStatus, readonly code: string, message: string) {
    super(message);
  }
}

/**
 * Plays one episode of a task: the policy acts; every call is rehearsed first, then (shadow, or
 * imagine with audit) executed for real; the episode continues on the actual response (shadow) or on
 * the rehearsal (imagine). Every step is written to the trace as it happens. Rehearsals never enter
 * the messages or the transcript a grader sees in shadow mode.
 */
export async function playEpisode(ctx: EpisodeContext): Promise<EpisodeOutcome> {
  const { task, episodeId, policy, settings, emit } = ctx;
  const limits = { ...DEFAULT_TASK_LIMITS, ...task.limits };
  const real = ctx.mode === 'shadow' || settings.audit;
  const turns: TranscriptTurn[] = [];
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), limits.episodeTimeoutMs);
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, timer.signal]) : timer.signal;
  const progress: EpisodeProgress = { episodeId, turns: 0, calls: 0 };
  let tools: ToolDefinition[] = [];
  let status: EpisodeStatus = 'completed';
  let error: { code: string; message: string } | undefined;
  let fatal = false;
  // EnvACE's rule grades each user turn as it is answered (docs/task-format.md, Checks and scoring).
  const envace = settings.reward === 'envace' ? new EnvaceGrader(task, real, ctx.grade) : undefined;

  try {
    if (real) {
      if (!ctx.env) throw new StudioError('NO_ENVIRONMENT', 'This mode executes tools, but no environment was given.');
      await ctx.env.startEpisode(task.seed);
      tools = ctx.env.tools();
    } else {
      tools = ctx.tools ?? (ctx.env ? (await ctx.env.startEpisode(task.seed), ctx.env.tools()) : []);
    }
  } catch (err) {
    clearTimeout(timeout);
    const e = err instanceof StudioError ? err : new StudioError('SERVER_START_FAILED', errorMessage(err));
    await emit({ type: 'episode', episodeId, index: ctx.index, taskId: task.id, mode: ctx.mode, instruction: task.turns[0]?.user, ...(ctx.role ? { role: ctx.role } : {}) });
    await emit({ type: 'episode.end', episodeId, status: 'failed', reward: null, success: null, error: { code: e.code, message: e.message } });
    return { status: 'failed', transcript: { turns: [], snapshot: { ok: false, error: e.message } }, error: { code: e.code, message: e.message }, fatal: false };
  }

  const system = [task.system, ctx.systemSuffix].filter(Boolean).join('\n\n');
  await emit({ type: 'episode', episodeId, index: ctx.index, taskId: task.id, mode: ctx.mode, instruction: task.turns[0]?.user, ...(system ? { system } : {}), tools, ...(ctx.role ? { role: ctx.role } : {}) });
  const messages: ChatMessage[] = system ? [{ role: 'system', content: system }] : [];
  const actSession = `${episodeId}:act`;
  const rehearseSession = `${episodeId}:rehearse`;
  let actTurns = 0;
  let lastTurnId: string | undefined;

  try {
    for (const [userIndex, userTurn] of task.turns.entries()) {
      messages.push({ role: 'user', content: userTurn.user });
      const transcriptTurn: TranscriptTurn = { user: userTurn.user, calls: [] };
      turns.push(transcriptTurn);
      let pendingUser: string | undefined = userTurn.user;
      for (;;) {
        if (signal.aborted) throw abortReason(ctx.signal, limits.episodeTimeoutMs);
        if (actTurns >= limits.maxTurns) throw new EpisodeEnd('limit', 'TURN_LIMIT', `The episode reached its limit of ${limits.maxTurns} turns.`);
        const turnIndex = actTurns++;
        const turnId = makeTurnId(episodeId, turnIndex);
        lastTurnId = turnId;
        const act = await policy.act({ messages: [...messages], tools, taskId: task.id, session: actSession, sampling: settings.sampling.act, maxTokens: settings.maxTokens.act, signal });
        if (signal.aborted) throw abortReason(ctx.signal, limits.episodeTimeoutMs);
        const actParse = actParseIn(act, settings.parse);
        const parse: TurnParse = actParse.kind === 'calls'
          ? { kind: 'calls', calls: actParse.calls.map((c, i) => ({ callId: makeCallId(turnId, i), name: c.name, arguments: c.arguments })) }
          : actParse.kind === 'final' ? { kind: 'final', answer: actParse.text } : { kind: 'error', code: actParse.error.code, message: actParse.error.message };
        await emit({ type: 'turn', episodeId, turnId, index: turnIndex, ...(pendingUser !== undefined ? { user: pendingUser } : {}), text: act.text, parse, tokens: act.tokens, latencyMs: Math.round(act.latencyMs) });
        pendingUser = undefined;
        progress.turns++;
        ctx.onProgress?.({ ...progress });
        const history = [...messages];
        messages.push({ role: 'assistant', content: act.text });
        let failure: { code: string; message: string } | undefined;

        if (parse.kind === 'final') { transcriptTurn.answer = parse.answer; break; }
        if (parse.kind === 'error') {
          if (settings.onParseError === 'end' || envace) throw new EpisodeEnd('failed', parse.code, `The policy's turn could not be parsed: ${parse.message}`);
          messages.push({ role: 'tool', name: PARSE_ERROR_TOOL_NAME, content: parseErrorToolText(parse.code, parse.message, act.text, settings.parse) });
          continue;
        }
        for (const [i, call] of parse.calls.entries()) {
          if (signal.aborted) throw abortReason(ctx.signal, limits.episodeTimeoutMs);
          const overLimit = i >= limits.maxCallsPerTurn;
          const result = overLimit
            ? await refuseCall(ctx, turnId, call.callId, call.name, limits.maxCallsPerTurn)
            : await playCall(ctx, { turnId, callId: call.callId, name: call.name, args: call.arguments, tools, history, latestText: act.text, real, rehearseSession, signal });
          transcriptTurn.calls.push(result.transcriptCall);
          messages.push({ role: 'tool', name: call.name, content: result.toolText });
          progress.calls++;
          ctx.onProgress?.({ ...progress });
          if (result.endEpisode) throw result.endEpisode;
          if (envace) failure ??= envaceToolFailure(result.transcriptCall, result.toolText);
        }
        // EnvACE runs every call of the act, then ends the episode if one of them failed (envs.py).
        if (failure) { envace!.noteToolFailure(); throw new EpisodeEnd('failed', failure.code, `A tool call failed (${failure.code}); EnvACE's rule ends the episode on any error_tool_call.`); }
      }
      if (envace && await envace.afterAnswer(userIndex, turns, () => takeSnapshot(ctx, real))) break;
    }
  } catch (err) {
    if (err instanceof EpisodeEnd) { status = err.status; error = { code: err.code, message: err.message }; }
    else {
      const e = err instanceof StudioError ? err : new StudioError('EPISODE_FAILED', errorMessage(err));
      status = ctx.signal?.aborted ? 'cancelled' : 'failed';
      error = { code: ctx.signal?.aborted ? 'CANCELLED' : envaceEpisodeCode(e.code, settings.parse), message: e.message };
      fatal = POLICY_GONE.has(e.code) || !!ctx.signal?.aborted;
    }
  } finally {
    clearTimeout(timeout);
    policy.endSession(actSession);
    policy.endSession(rehearseSession);
  }

  const snapshot = await takeSnapshot(ctx, real);
  const transcript: EpisodeTranscript = { turns, snapshot, ...(error ? { ended: { ...(lastTurnId ? { lastTurnId } : {}), code: error.code } } : {}) };
  let grade: Grade | undefined;
  if (status !== 'cancelled' && envace) grade = envace.grade(status);
  else if (status !== 'cancelled') {
    grade = await gradeEpisode(task, transcript, ctx.grade);
    if (!real) grade = withoutStateChecks(grade);
    if (status === 'failed' || status === 'limit') grade = gradeOfFailedEpisode(grade);
  }
  const answer = [...turns].reverse().find((t) => t.answer !== undefined)?.answer;
  await emit({
    type: 'episode.end',
    episodeId,
    status,
    reward: grade?.reward ?? null,
    success: grade?.success ?? null,
    ...(grade ? { checks: grade.checks } : {}),
    ...(answer !== undefined ? { answer } : {}),
    ...(error ? { error } : {}),
    ...(ctx.memory !== undefined ? { memory: ctx.memory } : {}),
  });
  return { status, grade, transcript, error, fatal };
}

interface CallPlay {
  turnId: string;
  callId: string;
  name: string;
  args: JsonValue;
  tools: ToolDefinition[];
  history: ChatMessage[];
  latestText: string;
  real: boolean;
  rehearseSession: string;
  signal: AbortSignal;
}

interface CallResult {
  transcriptCall: TranscriptCall;
  toolText: string;
  endEpisode?: EpisodeEnd;
}

async function playCall(ctx: EpisodeContext, c: CallPlay): Promise<CallResult> {
  const { episodeId, settings, emit } = ctx;
  // Rehearse first: in shadow mode the prediction is made before the tool has answered.
  let rehearsalEvent: CallRehearsalEvent | undefined;
  let sample: RehearsalSample | undefined;
  if (ctx.policy.rehearses !== false) {
    const prompt = buildRehearsePrompt({ tools: c.tools, examples: ctx.task.examples, history: c.history, latestText: c.latestText, call: { name: c.name, arguments: c.args } }, settings.rehearsePrompt);
    const rehearsal = await ctx.policy.rehearse({ messages: prompt, n: settings.rehearsalSamples, session: c.rehearseSession, sampling: settings.sampling.rehearse, maxTokens: settings.maxTokens.rehearse, signal: c.signal });
    if (c.signal.aborted) throw abortReason(ctx.signal, ctx.task.limits?.episodeTimeoutMs ?? DEFAULT_TASK_LIMITS.episodeTimeoutMs);
    sample = { ...rehearsal.samples[0], parse: rehearsalParseIn(rehearsal.samples[0], settings.parse) };
    rehearsalEvent = await emit({
      type: 'call.rehearsal', episodeId, turnId: c.turnId, callId: c.callId, tool: c.name, arguments: c.args, text: sample.text,
      result: sample.parse.ok ? { ok: true, value: sample.parse.value } : { ok: false, code: sample.parse.error.code, message: sample.parse.error.message },
      tokens: rehearsal.tokens, latencyMs: Math.round(rehearsal.latencyMs),
    }) as CallRehearsalEvent;
  }

  let actualEvent: CallActualEvent | undefined;
  if (c.real) {
    const outcome = await ctx.env!.call(c.name, c.args, { signal: c.signal, timeoutMs: ctx.task.limits?.callTimeoutMs });
    const error = outcome.error && settings.parse === 'envace'
      ? envaceToolError(outcome.error, { name: c.name, args: c.args, taskId: ctx.task.id })
      : outcome.error && { code: outcome.error.code, message: outcome.error.message };
    actualEvent = await emit({
      type: 'call.actual', episodeId, turnId: c.turnId, callId: c.callId, tool: c.name, source: ctx.env!.source,
      ...(outcome.response ? { response: outcome.response } : {}),
      ...(error ? { error } : {}),
      server: outcome.server, latencyMs: Math.round(outcome.latencyMs),
    }) as CallActualEvent;
    if (rehearsalEvent) await emit(fidelityEventFor(rehearsalEvent, actualEvent));
  }

  if (ctx.mode === 'shadow') {
    const outcome = { ...(actualEvent!.response ? { response: actualEvent!.response } : {}), ...(actualEvent!.error ? { error: actualEvent!.error } : {}) };
    return { transcriptCall: { name: c.name, arguments: c.args, outcome: outcome as TranscriptCall['outcome'] }, toolText: actualEventToolText(actualEvent) };
  }
  // Imagine: the episode continues on the rehearsal.
  if (!sample) throw new StudioError('NO_REHEARSAL', `${ctx.policy.info.id} does not rehearse, so it cannot play imagined episodes; use shadow mode.`);
  if (!sample.parse.ok) {
    const text = simulatorErrorText(sample.parse.error.code, sample.parse.error.message);
    // Under EnvACE's rule the act's other calls run first, then the episode ends (playEpisode).
    const end = settings.onParseError === 'end' && settings.reward !== 'envace' ? new EpisodeEnd('failed', sample.parse.error.code, `The rehearsal could not be parsed: ${sample.parse.error.message}`) : undefined;
    return { transcriptCall: { name: c.name, arguments: c.args, outcome: { response: { text: [text], isError: true } } }, toolText: text, endEpisode: end };
  }
  const imagined = rehearsedToolResult(sample.parse.value);
  return { transcriptCall: { name: c.name, arguments: c.args, outcome: { response: imagined } }, toolText: imagined.text![0] };
}

async function refuseCall(ctx: EpisodeContext, turnId: string, callId: string, name: string, max: number): Promise<CallResult> {
  const error = { code: 'CALL_LIMIT', message: `Only ${max} tool calls are allowed per turn; this call was not made.` };
  await ctx.emit({ type: 'call.actual', episodeId: ctx.episodeId, turnId, callId, tool: name, source: ctx.env?.source ?? 'mcp', error });
  return { transcriptCall: { name, arguments: null, outcome: { error } } as unknown as TranscriptCall, toolText: actualToolText(undefined, error) };
}

async function takeSnapshot(ctx: EpisodeContext, real: boolean): Promise<EpisodeTranscript['snapshot']> {
  if (!real || !ctx.env) return { ok: false, error: NO_REAL_STATE };
  try {
    const value: EnvironmentSnapshot = await ctx.env.snapshot();
    return { ok: true, value };
  } catch (err) {
    return { ok: false, error: errorMessage(err) };
  }
}

/** Imagined trajectories cannot be graded on state: those items are "not evaluated", never failed. */
function withoutStateChecks(grade: Grade): Grade {
  return scoreVerdicts(grade.checks.map((c) => (c.kind === 'state' ? { ...c, passed: null, detail: `not evaluated: ${NO_REAL_STATE}` } : c)));
}

function abortReason(runSignal: AbortSignal | undefined, episodeTimeoutMs: number): EpisodeEnd {
  if (runSignal?.aborted) return new EpisodeEnd('cancelled', 'CANCELLED', 'The run was stopped.');
  return new EpisodeEnd('limit', 'EPISODE_TIMEOUT', `The episode ran longer than ${episodeTimeoutMs} ms.`);
}
