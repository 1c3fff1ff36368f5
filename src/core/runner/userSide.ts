import { envError } from '../env/errors';
import type { CallOutcome, Environment } from '../env/types';
import type { TranscriptTurn, TranscriptUserCall } from '../tasks/checks/transcript';
import type { TaskUser } from '../tasks/format/taskFile';
import { DEFAULT_USER_TOOL_CALLS } from '../tasks/format/taskFile';
import type { ConversationUser, UserExchange, UserReply, UserToolCall } from '../tasks/taskUser';
import type { UserCallRecord } from '../trace/format/schema';
import { actualToolText } from './toolMessages';

/**
 * The user's side of an episode with a user in the loop: what the user has seen (its messages, the
 * agent's answers, its own calls and their results, as τ²'s user state holds them: the simulator is
 * asked afresh each time) and the calls it made with tools of its own (τ²'s dual control: telecom's
 * user on its phone) that the transcript and the trace do not hold yet.
 */
export interface UserSide {
  view: UserExchange[];
  /** The names of the user's tools the episode's environment runs (none without one). */
  tools: string[];
  /** Calls not yet placed in a transcript turn: the next turn's, made before its message. */
  pending: TranscriptUserCall[];
  /** Calls not yet written on a trace event: on the next `turn` with a user message, else on `episode.end`. */
  unwritten: UserCallRecord[];
}

/** A user side with nothing seen yet; `env` runs the user's tools when it offers them (started). */
export function openUserSide(env: Environment | undefined): UserSide {
  return {
    view: [],
    tools: (env?.userTools?.() ?? []).map((t) => t.name),
    pending: [],
    unwritten: [],
  };
}

/** What the user did next: a message, that it is done, or more calls of its tools than allowed. */
export type UserTurnReply =
  Exclude<UserReply, { kind: 'calls' }> | { kind: 'limit'; message: string };

/**
 * Asks the user for its next message; while it answers with calls of its own tools, runs them on
 * `env` (the episode's environment: the same state the agent's calls act on), records them, shows it
 * their results and asks again, up to the task's `maxToolCalls` calls (one more is `limit`: the
 * episode ends `USER_TOOL_LIMIT`). The caller checks `signal` afterwards.
 */
export async function askUser(
  side: UserSide,
  user: ConversationUser,
  spec: TaskUser,
  options: { env?: Environment; asked: number; signal: AbortSignal; callTimeoutMs?: number },
): Promise<UserTurnReply> {
  const max = (spec.kind === 'tau2' ? spec.maxToolCalls : undefined) ?? DEFAULT_USER_TOOL_CALLS;
  let made = 0;
  for (;;) {
    const reply = await user.next({
      conversation: [...side.view],
      asked: options.asked,
      tools: side.tools,
      signal: options.signal,
    });
    if (reply.kind !== 'calls') return reply;
    side.view.push({
      role: 'user',
      ...(reply.text ? { content: reply.text } : {}),
      calls: reply.calls,
    });
    for (const call of reply.calls) {
      if (options.signal.aborted) return { kind: 'done', reason: 'stopped' };
      if (made >= max)
        return {
          kind: 'limit',
          message: `The user made ${max} calls of its own tools without a message to the agent; its call of ${call.name} was not made.`,
        };
      made++;
      await runUserCall(side, call, options);
    }
  }
}

/** Runs one of the user's calls and records it on every side: its view, the transcript, the trace. */
async function runUserCall(
  side: UserSide,
  call: UserToolCall,
  options: { env?: Environment; signal: AbortSignal; callTimeoutMs?: number },
): Promise<void> {
  const outcome: CallOutcome = options.env?.callUserTool
    ? await options.env.callUserTool(call.name, call.arguments, {
        signal: options.signal,
        timeoutMs: options.callTimeoutMs,
      })
    : {
        error: envError(
          'UNKNOWN_TOOL',
          `"${call.name}" is not one of the user's tools (no environment runs them).`,
        ),
        latencyMs: 0,
        server: '',
      };
  const { response } = outcome;
  const error = outcome.error && { code: outcome.error.code, message: outcome.error.message };
  side.view.push({
    role: 'tool',
    id: call.id,
    name: call.name,
    content: actualToolText(response, error),
    ...(error || response?.isError ? { error: true } : {}),
  });
  const answered = {
    ...(response ? { response } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
  side.pending.push({ name: call.name, arguments: call.arguments, outcome: answered, at: 0 });
  side.unwritten.push({
    name: call.name,
    arguments: call.arguments,
    ...(response ? { response } : {}),
    ...(error ? { error } : {}),
    latencyMs: Math.round(outcome.latencyMs),
  });
}

/** The user's calls the next trace event carries, taken off the side (none: undefined). */
export function takeUnwritten(side: UserSide | undefined): UserCallRecord[] | undefined {
  if (!side?.unwritten.length) return undefined;
  return side.unwritten.splice(0);
}

/**
 * Places the user's pending calls in the transcript: on a new turn (`turn`), before its message;
 * else (the conversation or the episode ended) on the last turn, after the agent's answer.
 */
export function placePending(
  side: UserSide | undefined,
  turns: TranscriptTurn[],
  turn?: TranscriptTurn,
): void {
  if (!side?.pending.length) return;
  const calls = side.pending.splice(0);
  const target = turn ?? turns.at(-1);
  if (!target) return; // the episode ended before its first turn: the trace's episode.end has them
  const placed = turn
    ? calls
    : calls.map((c) => ({ ...c, at: target.calls.length, afterAnswer: true }));
  target.userCalls = [...(target.userCalls ?? []), ...placed];
}
