import { StudioError, errorMessage } from '../base/errors';
import type { JsonValue } from '../base/json';
import type { Environment, EnvironmentSnapshot } from '../env/types';
import type { Grade, GradeOptions } from '../tasks/checks/grade';
import { gradeEpisode, gradeOfFailedEpisode, withoutStateItems } from '../tasks/checks/grade';
import type { EpisodeTranscript, TranscriptCall, TranscriptTurn } from '../tasks/checks/transcript';
import type { TaskFile, TaskUser } from '../tasks/format/taskFile';
import { DEFAULT_TASK_LIMITS, DEFAULT_USER_TURNS, offeredTools } from '../tasks/format/taskFile';
import type { ConversationUser, OpenUser } from '../tasks/taskUser';
import { absentUser, scriptedUser, stopIn } from '../tasks/taskUser';
import { buildRehearsePrompt } from '../protocol/rehearsePrompt';
import type { ChatMessage, ToolDefinition } from '../protocol/types';
import type { ActResult, Policy, RehearsalSample, RehearseResult } from '../policy/types';
import { mixSeed } from '../base/random';
import { fidelityEventFor } from '../trace/index/callView';
import { callId as makeCallId, turnId as makeTurnId } from '../trace/format/ids';
import type {
  CallActualEvent,
  CallRehearsalEvent,
  EpisodeStatus,
  UserEnd,
  NewTraceEvent,
  RejectedRehearsal,
  RunMode,
  SampledText,
  TraceEvent,
  TurnParse,
  UserCallRecord,
} from '../trace/format/schema';
import { rehearsalResult } from '../trace/format/schema';
import { EnvaceGrader, envaceToolFailure, NO_REAL_STATE } from './envaceGrading';
import type { UserSide } from './userSide';
import { askUser, openUserSide, placePending, takeUnwritten } from './userSide';
import { actParseIn, envaceEpisodeCode, envaceToolError, rehearsalParseIn } from './parseDialect';
import type { RunSettings } from './settings';
import {
  actualEventToolText,
  actualToolText,
  parseErrorToolMessage,
  imaginedToolResult,
} from './toolMessages';
import type { TimerHandle } from '../base/timers';
import { safeTimeout } from '../base/timers';

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
  /**
   * What the policy reads as a system message of its own after the task's system prompt: private
   * rehearsal's memory, or the earlier imagined attempts. A message of its own, because a chat
   * template may leave the task's system prompt out (the small policies' `minimal` one does: the
   * domain's policy text is the same for every task), and a suffix of it then reached no policy.
   */
  context?: string;
  /** Private rehearsal's memory, recorded on the episode's end. */
  memory?: string;
  /**
   * Opens the task's user in the loop (`task.user`); without it a `script` user plays its messages
   * and a `tau2` user is not asked (the conversation ends after the task's turns).
   */
  openUser?: OpenUser;
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
const POLICY_GONE = new Set([
  'POLICY_HOST_CRASHED',
  'POLICY_HOST_OUT_OF_MEMORY',
  'POLICY_HOST_ERROR',
  'ENDPOINT_UNREACHABLE',
  'ENDPOINT_AUTH',
]);

/** How an episode ended before its last user turn was answered. */
interface EpisodeEnding {
  status: EpisodeStatus;
  code: string;
  message: string;
}

/** The episode ends here. */
interface Ended {
  kind: 'end';
  ending: EpisodeEnding;
}

/** One act turn's result: the policy goes on, answered the user turn, or the episode ends. */
type TurnResult = { kind: 'continue' } | { kind: 'answered' } | Ended;

/** An episode in play: what its turns share and update. */
interface EpisodePlay {
  ctx: EpisodeContext;
  limits: typeof DEFAULT_TASK_LIMITS;
  /** Whether the real tools run (shadow, or imagine with audit). */
  real: boolean;
  /**
   * Whether the episode is graded on the real state: shadow only. An audited imagined episode is
   * graded as an unaudited one, on its imagined trajectory: the real tools that ran beside it (on
   * ids it invented) are there for comparison, never for its reward.
   */
  gradedOnRealState: boolean;
  /** The tools offered in the current user turn ({@link offeredTools}). */
  tools: ToolDefinition[];
  /** Every tool of the environment. */
  allTools: ToolDefinition[];
  signal: AbortSignal;
  envace: EnvaceGrader | undefined;
  messages: ChatMessage[];
  progress: EpisodeProgress;
  actSession: string;
  rehearseSession: string;
  actTurns: number;
  lastTurnId?: string;
  /** How the user in the loop ended the conversation, when it did. */
  userEnd?: UserEnd;
  /** The user in the loop's side: what it saw, and its own calls (τ²'s dual control). */
  userSide?: UserSide;
  /** Whether the environment was started for this episode (the user's tools run on it). */
  envStarted: boolean;
}

function ended(status: EpisodeStatus, code: string, message: string): Ended {
  return { kind: 'end', ending: { status, code, message } };
}

/**
 * Plays one episode of a task: the policy acts; every call is rehearsed first, then (shadow, or
 * imagine with audit) executed for real; the episode continues on the actual response (shadow) or on
 * the rehearsal (imagine). Every step is written to the trace as it happens. Rehearsals never enter
 * the messages or the transcript a grader sees in shadow mode.
 */
export async function playEpisode(ctx: EpisodeContext): Promise<EpisodeOutcome> {
  const limits = { ...DEFAULT_TASK_LIMITS, ...ctx.task.limits };
  const timer = new AbortController();
  const timeout = safeTimeout(() => timer.abort(), limits.episodeTimeoutMs);
  // Cleared however the episode ends, a failed write included: a pending timer would hold the
  // process open until the episode's time is up (ten minutes by default).
  try {
    return await playWithin(ctx, limits, timer.signal, timeout);
  } finally {
    clearTimeout(timeout);
  }
}

/** {@link playEpisode} under the episode's timer (`timeout`, which aborts `timedOut`). */
async function playWithin(
  ctx: EpisodeContext,
  limits: typeof DEFAULT_TASK_LIMITS,
  timedOut: AbortSignal,
  timeout: TimerHandle,
): Promise<EpisodeOutcome> {
  const { task, episodeId, policy, settings, emit } = ctx;
  const real = ctx.mode === 'shadow' || settings.audit;
  const gradedOnRealState = ctx.mode === 'shadow';
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, timedOut]) : timedOut;
  // EnvACE's rule grades each user turn as it is answered (docs/task-format.md, Checks and scoring).
  const envace =
    settings.reward === 'envace' ? new EnvaceGrader(task, gradedOnRealState, ctx.grade) : undefined;

  const started = await startTools(ctx, real);
  if ('failed' in started) return started.failed;
  const allTools = started.tools;
  // Tools a later user turn adds are held back until then (BFCL's miss_func).
  const tools = offeredTools(allTools, task.turns, 0);

  const system = task.system;
  await emit(episodeStart(ctx, { system, tools }));
  const play: EpisodePlay = {
    ctx,
    limits,
    real,
    gradedOnRealState,
    tools,
    allTools,
    signal,
    envace,
    messages: episodeMessages(system, ctx.context),
    progress: { episodeId, turns: 0, calls: 0 },
    actSession: `${episodeId}:act`,
    rehearseSession: `${episodeId}:rehearse`,
    actTurns: 0,
    envStarted: started.envStarted,
  };
  const turns: TranscriptTurn[] = [];
  let ending: EpisodeEnding | undefined;
  let fatal = false;
  try {
    ending = await playUserTurns(play, turns);
  } catch (err) {
    ({ ending, fatal } = endingOfError(ctx, err));
  } finally {
    clearTimeout(timeout);
    policy.endSession(play.actSession);
    policy.endSession(play.rehearseSession);
  }
  return finishEpisode(play, turns, ending, fatal);
}

/**
 * The messages an episode starts with: the task's system prompt, then the context (private
 * rehearsal's memory or earlier attempts) as a system message of its own. Training rows rebuild the
 * same from the episode's start event.
 */
export function episodeMessages(
  system: string | undefined,
  context: string | undefined,
): ChatMessage[] {
  return [
    ...(system ? [{ role: 'system' as const, content: system }] : []),
    ...(context ? [{ role: 'system' as const, content: context }] : []),
  ];
}

/** The episode's start event; an episode whose tools did not start has no system text or tools. */
function episodeStart(
  ctx: EpisodeContext,
  started: { system?: string; tools?: ToolDefinition[] } = {},
): NewTraceEvent {
  return {
    type: 'episode',
    episodeId: ctx.episodeId,
    index: ctx.index,
    taskId: ctx.task.id,
    mode: ctx.mode,
    instruction: ctx.task.turns[0]?.user,
    ...(started.system ? { system: started.system } : {}),
    ...(started.tools && ctx.context ? { context: ctx.context } : {}),
    ...(started.tools ? { tools: started.tools } : {}),
    ...(ctx.role ? { role: ctx.role } : {}),
  };
}

/** Starts the environment (when the mode executes tools, or to list them) and returns its tools, or the failed episode. */
async function startTools(
  ctx: EpisodeContext,
  real: boolean,
): Promise<{ tools: ToolDefinition[]; envStarted: boolean } | { failed: EpisodeOutcome }> {
  const { task, episodeId, emit } = ctx;
  try {
    if (real) {
      if (!ctx.env)
        throw new StudioError(
          'NO_ENVIRONMENT',
          'This mode executes tools, but no environment was given.',
        );
      await ctx.env.startEpisode(task.seed);
      return { tools: ctx.env.tools(), envStarted: true };
    }
    if (ctx.tools) return { tools: ctx.tools, envStarted: false };
    if (!ctx.env) return { tools: [], envStarted: false };
    await ctx.env.startEpisode(task.seed);
    return { tools: ctx.env.tools(), envStarted: true };
  } catch (err) {
    const e =
      err instanceof StudioError ? err : new StudioError('SERVER_START_FAILED', errorMessage(err));
    await emit(episodeStart(ctx));
    await emit({
      type: 'episode.end',
      episodeId,
      status: 'failed',
      reward: null,
      success: null,
      error: { code: e.code, message: e.message },
    });
    return {
      failed: {
        status: 'failed',
        transcript: { turns: [], snapshot: { ok: false, error: e.message } },
        error: { code: e.code, message: e.message },
        fatal: false,
      },
    };
  }
}

/**
 * Plays the task's user turns in order, then, when the task names a user, the user's messages until
 * it ends the conversation; returns how the episode ended early, if it did.
 */
async function playUserTurns(
  play: EpisodePlay,
  turns: TranscriptTurn[],
): Promise<EpisodeEnding | undefined> {
  const { ctx, envace } = play;
  const spec = envace ? undefined : ctx.task.user;
  const user = spec && (ctx.openUser ?? openUserByDefault)(spec, ctx.grade?.baseDir ?? '.');
  if (user) play.userSide = openUserSide(play.envStarted ? ctx.env : undefined);
  // τ²'s user speaks first, in answer to the agent's greeting: its message replaces the first turn's.
  let opening: string | undefined;
  if (spec && user?.opens) {
    const reply = await userReplyOf(play, spec, user, 0);
    if (reply.kind === 'end') return reply.ending;
    opening = reply.kind === 'message' ? reply.text : undefined;
  }
  for (const [userIndex, userTurn] of ctx.task.turns.entries()) {
    play.tools = offeredTools(play.allTools, ctx.task.turns, userIndex);
    const text = userIndex === 0 && opening !== undefined ? opening : userTurn.user;
    const turn = await playUserTurn(play, turns, text);
    if (turn.kind === 'end') return turn.ending;
    if (
      envace &&
      (await envace.afterAnswer(userIndex, turns, () => takeSnapshot(ctx, play.gradedOnRealState)))
    )
      return undefined;
  }
  if (!spec || !user) return undefined;
  play.tools = play.allTools;
  return converse(play, turns, spec, user);
}

/**
 * The user's next message (or that it is done), its calls of its own tools made first in the
 * episode's environment; the episode's end when it made too many (`USER_TOOL_LIMIT`) or was stopped.
 */
async function userReplyOf(
  play: EpisodePlay,
  spec: TaskUser,
  user: ConversationUser,
  asked: number,
): Promise<{ kind: 'message'; text: string } | { kind: 'done'; reason: string } | Ended> {
  const { ctx, limits, signal } = play;
  if (signal.aborted) return abortReason(ctx.signal, limits.episodeTimeoutMs);
  const reply = await askUser(play.userSide!, user, spec, {
    env: ctx.env,
    asked,
    signal,
    callTimeoutMs: ctx.task.limits?.callTimeoutMs,
  });
  if (signal.aborted) return abortReason(ctx.signal, limits.episodeTimeoutMs);
  if (reply.kind === 'limit') return ended('limit', 'USER_TOOL_LIMIT', reply.message);
  return reply;
}

/** One user message and the agent's work on it, up to its answer or the episode's end. */
async function playUserTurn(
  play: EpisodePlay,
  turns: TranscriptTurn[],
  user: string,
): Promise<TurnResult> {
  play.messages.push({ role: 'user', content: user });
  const transcriptTurn: TranscriptTurn = { user, calls: [] };
  placePending(play.userSide, turns, transcriptTurn);
  turns.push(transcriptTurn);
  play.userSide?.view.push({ role: 'user', content: user });
  let turn = await playTurn(play, transcriptTurn, user);
  while (turn.kind === 'continue') turn = await playTurn(play, transcriptTurn, undefined);
  if (turn.kind === 'answered' && transcriptTurn.answer !== undefined)
    play.userSide?.view.push({ role: 'assistant', content: transcriptTurn.answer });
  return turn;
}

/**
 * The user in the loop: after each answer, the user's next message, until it ends the conversation
 * as τ²'s does: a stop text in its message, an answer after a call of an end tool (the transfer to a
 * human), a script that ran out; or the episode ends `USER_TURN_LIMIT` after `maxTurns` messages.
 */
async function converse(
  play: EpisodePlay,
  turns: TranscriptTurn[],
  spec: TaskUser,
  user: ConversationUser,
): Promise<EpisodeEnding | undefined> {
  const maxTurns = spec.maxTurns ?? DEFAULT_USER_TURNS;
  for (let asked = 0; ; asked++) {
    const endTool = turns.at(-1)?.calls.find((c) => spec.endTools?.includes(c.name));
    if (endTool) {
      play.userEnd = { by: 'tool', text: endTool.name };
      return undefined;
    }
    if (asked >= maxTurns)
      return ended(
        'limit',
        'USER_TURN_LIMIT',
        `The user spoke ${maxTurns} times after the task's turns without ending the conversation.`,
      ).ending;
    const reply = await userReplyOf(play, spec, user, asked);
    if (reply.kind === 'end') return reply.ending;
    if (reply.kind === 'done') {
      play.userEnd = { by: 'done', text: reply.reason };
      return undefined;
    }
    if (stopIn(spec, reply.text) !== undefined) {
      play.userEnd = { by: 'stop', text: reply.text };
      return undefined;
    }
    const turn = await playUserTurn(play, turns, reply.text);
    if (turn.kind === 'end') return turn.ending;
  }
}

/** The `userCalls` field of a trace event, when there are calls to write. */
function withUserCalls(calls: UserCallRecord[] | undefined): { userCalls?: UserCallRecord[] } {
  return calls ? { userCalls: calls } : {};
}

/** Without a run's own opener: a script plays; τ²'s simulator, which needs an endpoint, is not asked. */
const openUserByDefault: OpenUser = (spec) =>
  spec.kind === 'script' ? scriptedUser(spec) : absentUser;

/** One act turn: the policy acts, its turn is parsed and recorded, and its calls are played. */
async function playTurn(
  play: EpisodePlay,
  transcriptTurn: TranscriptTurn,
  user: string | undefined,
): Promise<TurnResult> {
  const { ctx, limits, signal, messages, progress } = play;
  const { task, episodeId, settings, emit } = ctx;
  if (signal.aborted) return abortReason(ctx.signal, limits.episodeTimeoutMs);
  if (play.actTurns >= limits.maxTurns)
    return ended(
      'limit',
      'TURN_LIMIT',
      `The episode reached its limit of ${limits.maxTurns} turns.`,
    );
  const turnIndex = play.actTurns++;
  const turnId = makeTurnId(episodeId, turnIndex);
  play.lastTurnId = turnId;
  const act = await ctx.policy.act({
    messages: [...messages],
    tools: play.tools,
    taskId: task.id,
    session: play.actSession,
    sampling: settings.sampling.act,
    maxTokens: settings.maxTokens.act,
    signal,
  });
  if (signal.aborted) return abortReason(ctx.signal, limits.episodeTimeoutMs);
  const actParse = actParseIn(act, settings.parse);
  const parse: TurnParse =
    actParse.kind === 'calls'
      ? {
          kind: 'calls',
          calls: actParse.calls.map((c, i) => ({
            callId: makeCallId(turnId, i),
            name: c.name,
            arguments: c.arguments,
          })),
        }
      : actParse.kind === 'final'
        ? { kind: 'final', answer: actParse.text }
        : { kind: 'error', code: actParse.error.code, message: actParse.error.message };
  await emit({
    type: 'turn',
    episodeId,
    turnId,
    index: turnIndex,
    ...(user !== undefined ? { user } : {}),
    ...(user !== undefined ? withUserCalls(takeUnwritten(play.userSide)) : {}),
    text: act.text,
    ...sampledText(act),
    parse,
    tokens: act.tokens,
    latencyMs: Math.round(act.latencyMs),
  });
  progress.turns++;
  ctx.onProgress?.({ ...progress });
  const history = [...messages];
  messages.push({ role: 'assistant', content: act.text });

  if (parse.kind === 'final') {
    transcriptTurn.answer = parse.answer;
    return { kind: 'answered' };
  }
  if (parse.kind === 'error') {
    if (settings.onParseError === 'end' || play.envace)
      return ended('failed', parse.code, `The policy's turn could not be parsed: ${parse.message}`);
    messages.push(parseErrorToolMessage(act.text, parse, settings.parse));
    return { kind: 'continue' };
  }
  return playCalls(play, transcriptTurn, {
    turnId,
    calls: parse.calls,
    latestText: act.text,
    history,
  });
}

/** The calls of one act turn, with what their rehearsal prompts need. */
interface TurnCalls {
  turnId: string;
  calls: { callId: string; name: string; arguments: JsonValue }[];
  latestText: string;
  history: ChatMessage[];
}

/** Plays an act turn's calls in order (those over the limit are refused, not made). */
async function playCalls(
  play: EpisodePlay,
  transcriptTurn: TranscriptTurn,
  turn: TurnCalls,
): Promise<TurnResult> {
  const { ctx, limits, signal, envace } = play;
  let failure: { code: string; message: string } | undefined;
  for (const [i, call] of turn.calls.entries()) {
    if (signal.aborted) return abortReason(ctx.signal, limits.episodeTimeoutMs);
    const overLimit = i >= limits.maxCallsPerTurn;
    const result = overLimit
      ? await refuseCall(ctx, turn.turnId, call.callId, call.name, limits.maxCallsPerTurn)
      : await playCall(ctx, {
          turnId: turn.turnId,
          callId: call.callId,
          name: call.name,
          args: call.arguments,
          tools: play.tools,
          history: turn.history,
          latestText: turn.latestText,
          real: play.real,
          rehearseSession: play.rehearseSession,
          signal,
        });
    if (result.kind === 'end') return result;
    transcriptTurn.calls.push(result.transcriptCall);
    play.messages.push({ role: 'tool', name: call.name, content: result.toolText });
    play.progress.calls++;
    ctx.onProgress?.({ ...play.progress });
    if (result.endEpisode) return { kind: 'end', ending: result.endEpisode };
    if (envace) failure ??= envaceToolFailure(result.transcriptCall, result.toolText);
  }
  // EnvACE runs every call of the act, then ends the episode if one of them failed (envs.py).
  if (failure) {
    envace!.noteToolFailure();
    return ended(
      'failed',
      failure.code,
      `A tool call failed (${failure.code}); EnvACE's rule ends the episode on any error_tool_call.`,
    );
  }
  return { kind: 'continue' };
}

/** How an episode that threw ended: cancelled when the run was stopped, failed otherwise. */
function endingOfError(
  ctx: EpisodeContext,
  err: unknown,
): { ending: EpisodeEnding; fatal: boolean } {
  const e = err instanceof StudioError ? err : new StudioError('EPISODE_FAILED', errorMessage(err));
  const cancelled = !!ctx.signal?.aborted;
  return {
    ending: {
      status: cancelled ? 'cancelled' : 'failed',
      code: cancelled ? 'CANCELLED' : envaceEpisodeCode(e.code, ctx.settings.parse),
      message: e.message,
    },
    fatal: POLICY_GONE.has(e.code) || cancelled,
  };
}

/** Takes the final snapshot, grades the episode (unless cancelled) and writes its end. */
async function finishEpisode(
  play: EpisodePlay,
  turns: TranscriptTurn[],
  ending: EpisodeEnding | undefined,
  fatal: boolean,
): Promise<EpisodeOutcome> {
  const { ctx, gradedOnRealState, envace, lastTurnId } = play;
  const status: EpisodeStatus = ending?.status ?? 'completed';
  const error = ending && { code: ending.code, message: ending.message };
  placePending(play.userSide, turns);
  const snapshot = await takeSnapshot(ctx, gradedOnRealState);
  const transcript: EpisodeTranscript = {
    turns,
    snapshot,
    ...(error ? { ended: { ...(lastTurnId ? { lastTurnId } : {}), code: error.code } } : {}),
  };
  let grade: Grade | undefined;
  if (status !== 'cancelled' && envace) grade = envace.grade(status);
  else if (status !== 'cancelled') {
    grade = await gradeEpisode(ctx.task, transcript, ctx.grade);
    // Imagined trajectories cannot be graded on state: those items are "not evaluated", never failed.
    if (!gradedOnRealState) grade = withoutStateItems(grade, NO_REAL_STATE);
    if (status === 'failed' || status === 'limit') grade = gradeOfFailedEpisode(grade);
  }
  const answer = [...turns].reverse().find((t) => t.answer !== undefined)?.answer;
  await ctx.emit({
    type: 'episode.end',
    episodeId: ctx.episodeId,
    status,
    reward: grade?.reward ?? null,
    success: grade?.success ?? null,
    ...(grade ? { checks: grade.checks } : {}),
    ...(answer !== undefined ? { answer } : {}),
    ...(error ? { error } : {}),
    ...(ctx.memory !== undefined ? { memory: ctx.memory } : {}),
    ...(play.userEnd ? { userEnd: play.userEnd } : {}),
    ...withUserCalls(takeUnwritten(play.userSide)),
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
  kind: 'played';
  transcriptCall: TranscriptCall;
  toolText: string;
  endEpisode?: EpisodeEnding;
}

/**
 * Plays one tool call: rehearsed by the policy (when it rehearses), run on the real tool (when the
 * mode does), and answered to the agent from the one the mode continues on.
 */
async function playCall(ctx: EpisodeContext, c: CallPlay): Promise<CallResult | Ended> {
  // Rehearse first: in shadow mode the prediction is made before the tool has answered.
  let rehearsalEvent: CallRehearsalEvent | undefined;
  let sample: RehearsalSample | undefined;
  if (ctx.policy.rehearses !== false) {
    const rehearsed = await rehearseCall(ctx, c);
    if (!('sample' in rehearsed)) return rehearsed;
    ({ sample, rehearsalEvent } = rehearsed);
  }
  const actualEvent = c.real ? await callRealTool(ctx, c, rehearsalEvent) : undefined;
  if (ctx.mode === 'shadow') return shadowCallResult(c, actualEvent!);
  return imaginedCallResult(ctx, c, sample);
}

/** What a trace records of how a generation was sampled ({@link SampledText}). */
function sampledText(g: Pick<ActResult, 'sampledText' | 'finish' | 'sampledTokens'>): SampledText {
  return {
    ...(g.sampledText !== undefined ? { sampled: g.sampledText } : {}),
    ...(g.finish ? { finish: g.finish } : {}),
    ...(g.sampledTokens ? { sampledTokens: g.sampledTokens } : {}),
  };
}

/**
 * How many times an unparsable rehearsal is sampled again: only in imagined episodes (a shadow
 * episode's rehearsals are measured as they come), and only when the rehearse role samples (a greedy
 * retry would write the same text).
 */
function rehearsalRetriesFor(ctx: EpisodeContext): number {
  const { rehearsalRetries, sampling } = ctx.settings;
  return ctx.mode !== 'shadow' && (sampling.rehearse.temperature ?? 0) > 0 ? rehearsalRetries : 0;
}

/**
 * Asks the policy for the call's rehearsal (again, up to `rehearsalRetries` times, while it does not
 * parse in an imagined episode) and records it with its rejected samples; ends the episode when it
 * was stopped meanwhile.
 */
async function rehearseCall(
  ctx: EpisodeContext,
  c: CallPlay,
): Promise<{ sample: RehearsalSample; rehearsalEvent: CallRehearsalEvent } | Ended> {
  const prompt = buildRehearsePrompt(
    {
      tools: c.tools,
      examples: ctx.task.examples,
      history: c.history,
      latestText: c.latestText,
      call: { name: c.name, arguments: c.args },
    },
    ctx.settings.rehearsePrompt,
  );
  const rejected: RejectedRehearsal[] = [];
  const retries = rehearsalRetriesFor(ctx);
  const started = performance.now();
  let rehearsal: RehearseResult;
  let sample: RehearsalSample;
  for (let attempt = 0; ; attempt++) {
    const sampling = ctx.settings.sampling.rehearse;
    rehearsal = await ctx.policy.rehearse({
      messages: prompt,
      n: ctx.settings.rehearsalSamples,
      session: c.rehearseSession,
      // A retry samples with a seed of its own: the same seed and prompt would give the same text.
      sampling:
        attempt === 0
          ? sampling
          : {
              ...sampling,
              seed: mixSeed(sampling.seed ?? 0, 'rehearsal retry', c.callId, attempt),
            },
      maxTokens: ctx.settings.maxTokens.rehearse,
      signal: c.signal,
    });
    if (c.signal.aborted)
      return abortReason(
        ctx.signal,
        ctx.task.limits?.episodeTimeoutMs ?? DEFAULT_TASK_LIMITS.episodeTimeoutMs,
      );
    sample = {
      ...rehearsal.samples[0],
      parse: rehearsalParseIn(rehearsal.samples[0], ctx.settings.parse),
    };
    if (sample.parse.ok || attempt >= retries) break;
    rejected.push({
      text: sample.text,
      ...sampledText(sample),
      result: rehearsalResult(sample.parse) as RejectedRehearsal['result'],
      tokens: rehearsal.tokens,
    });
  }
  const rehearsalEvent = (await ctx.emit({
    type: 'call.rehearsal',
    episodeId: ctx.episodeId,
    turnId: c.turnId,
    callId: c.callId,
    tool: c.name,
    arguments: c.args,
    text: sample.text,
    ...sampledText(sample),
    result: rehearsalResult(sample.parse),
    tokens: rehearsal.tokens,
    latencyMs: Math.round(performance.now() - started),
    ...(rejected.length ? { rejected } : {}),
  })) as CallRehearsalEvent;
  return { sample, rehearsalEvent };
}

/** Runs the call on the real tool and records its answer, and the fidelity when it was rehearsed. */
async function callRealTool(
  ctx: EpisodeContext,
  c: CallPlay,
  rehearsalEvent: CallRehearsalEvent | undefined,
): Promise<CallActualEvent> {
  const outcome = await ctx.env!.call(c.name, c.args, {
    signal: c.signal,
    timeoutMs: ctx.task.limits?.callTimeoutMs,
  });
  const error =
    outcome.error && ctx.settings.parse === 'envace'
      ? envaceToolError(outcome.error, { name: c.name, args: c.args, taskId: ctx.task.id })
      : outcome.error && { code: outcome.error.code, message: outcome.error.message };
  const actualEvent = (await ctx.emit({
    type: 'call.actual',
    episodeId: ctx.episodeId,
    turnId: c.turnId,
    callId: c.callId,
    tool: c.name,
    source: ctx.env!.source,
    ...(outcome.response ? { response: outcome.response } : {}),
    ...(error ? { error } : {}),
    server: outcome.server,
    latencyMs: Math.round(outcome.latencyMs),
  })) as CallActualEvent;
  if (rehearsalEvent) await ctx.emit(fidelityEventFor(rehearsalEvent, actualEvent));
  return actualEvent;
}

/** What checks read of a recorded actual response: its result, or why there is none. */
export function actualOutcome(actualEvent: CallActualEvent): TranscriptCall['outcome'] {
  return {
    ...(actualEvent.response ? { response: actualEvent.response } : {}),
    ...(actualEvent.error ? { error: actualEvent.error } : {}),
  } as TranscriptCall['outcome'];
}

/** Shadow mode: the episode continues on the real tool's answer. */
function shadowCallResult(c: CallPlay, actualEvent: CallActualEvent): CallResult {
  return {
    kind: 'played',
    transcriptCall: { name: c.name, arguments: c.args, outcome: actualOutcome(actualEvent) },
    toolText: actualEventToolText(actualEvent),
  };
}

/**
 * Imagine mode: the episode continues on the rehearsal; one that did not parse is a simulator error
 * for the agent, and may end the episode.
 */
function imaginedCallResult(
  ctx: EpisodeContext,
  c: CallPlay,
  sample: RehearsalSample | undefined,
): CallResult {
  if (!sample)
    throw new StudioError(
      'NO_REHEARSAL',
      `${ctx.policy.info.id} does not rehearse, so it cannot play imagined episodes; use shadow mode.`,
    );
  const response = imaginedToolResult(rehearsalResult(sample.parse));
  const toolText = response.text![0];
  if (!sample.parse.ok) {
    // Under EnvACE's rule the act's other calls run first, then the episode ends (playEpisode).
    const end: EpisodeEnding | undefined =
      ctx.settings.onParseError === 'end' && ctx.settings.reward !== 'envace'
        ? {
            status: 'failed',
            code: sample.parse.error.code,
            message: `The rehearsal could not be parsed: ${sample.parse.error.message}`,
          }
        : undefined;
    return {
      kind: 'played',
      transcriptCall: { name: c.name, arguments: c.args, outcome: { response } },
      toolText,
      endEpisode: end,
    };
  }
  return {
    kind: 'played',
    transcriptCall: { name: c.name, arguments: c.args, outcome: { response } },
    toolText,
  };
}

async function refuseCall(
  ctx: EpisodeContext,
  turnId: string,
  callId: string,
  name: string,
  max: number,
): Promise<CallResult> {
  const error = {
    code: 'CALL_LIMIT',
    message: `Only ${max} tool calls are allowed per turn; this call was not made.`,
  };
  await ctx.emit({
    type: 'call.actual',
    episodeId: ctx.episodeId,
    turnId,
    callId,
    tool: name,
    source: ctx.env?.source ?? 'mcp',
    error,
  });
  return {
    kind: 'played',
    transcriptCall: { name, arguments: null, outcome: { error } } as unknown as TranscriptCall,
    toolText: actualToolText(undefined, error),
  };
}

async function takeSnapshot(
  ctx: EpisodeContext,
  real: boolean,
): Promise<EpisodeTranscript['snapshot']> {
  if (!real || !ctx.env) return { ok: false, error: NO_REAL_STATE };
  try {
    const value: EnvironmentSnapshot = await ctx.env.snapshot();
    return { ok: true, value };
  } catch (err) {
    return { ok: false, error: errorMessage(err) };
  }
}

function abortReason(runSignal: AbortSignal | undefined, episodeTimeoutMs: number): Ended {
  if (runSignal?.aborted) return ended('cancelled', 'CANCELLED', 'The run was stopped.');
  return ended('limit', 'EPISODE_TIMEOUT', `The episode ran longer than ${episodeTimeoutMs} ms.`);
}
