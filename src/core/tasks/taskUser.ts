import type { JsonValue } from '../base/json';
import type { ScriptUser, TaskUser } from './format/taskFile';

/** One of the user's own tool calls (τ²'s dual control), with the id its model gave it. */
export interface UserToolCall {
  id: string;
  name: string;
  arguments: JsonValue;
}

/**
 * One message of the conversation as the user sees it: its own messages and the agent's answers;
 * where the user has tools of its own, its calls (with the text it wrote beside them, which the agent
 * never sees) and each call's result (`error`: the tool failed or never answered).
 */
export type UserExchange =
  | { role: 'user' | 'assistant'; content: string }
  | { role: 'user'; content?: string; calls: UserToolCall[] }
  | { role: 'tool'; id: string; name: string; content: string; error?: boolean };

/**
 * What the user does next: a message; calls of its own tools, made in its environment before it is
 * asked again (`text`: what it wrote beside them, which the agent never sees); or that it has nothing
 * more to say (a script that ran out).
 */
export type UserReply =
  | { kind: 'message'; text: string }
  | { kind: 'calls'; calls: UserToolCall[]; text?: string }
  | { kind: 'done'; reason: string };

/** What a user is asked after each answer of the agent past the task's `turns`. */
export interface UserAsk {
  /** The conversation so far, the last message the agent's answer or the result of the user's last call. */
  conversation: readonly UserExchange[];
  /** How many times this user was asked for a message before in this episode (its calls not counted). */
  asked: number;
  /** The names of the user's own tools the environment can run (none: it has none, or no environment runs). */
  tools: readonly string[];
  signal: AbortSignal;
}

/**
 * A user in the loop (docs/task-format.md, A user in the loop). One is opened per episode; it may
 * throw a coded StudioError (`USER_UNREACHABLE`, `USER_FAILED`), which ends that episode with the
 * error and leaves the run going.
 */
export interface ConversationUser {
  next(ask: UserAsk): Promise<UserReply>;
  /** It writes the first message too (asked with an empty conversation), in place of the task's first turn. */
  readonly opens?: boolean;
}

/** Opens the user of a task's episode (`baseDir`: where the task's relative paths resolve). */
export type OpenUser = (user: TaskUser, baseDir: string) => ConversationUser;

/** A recorded user: its messages in order; done when they run out. */
export function scriptedUser(spec: ScriptUser): ConversationUser {
  return {
    next: ({ asked }) =>
      Promise.resolve(
        asked < spec.messages.length
          ? { kind: 'message', text: spec.messages[asked] }
          : { kind: 'done', reason: `the script's ${spec.messages.length} message(s) ran out` },
      ),
  };
}

/** τ²'s user when no endpoint plays it: not asked, the conversation ends after the task's turns. */
export const absentUser: ConversationUser = {
  next: () =>
    Promise.resolve({
      kind: 'done',
      reason:
        "no endpoint plays τ²'s user simulator (--user-endpoint, --user-model): the conversation ends after the task's turns",
    }),
};

/** The stop text a user message holds ({@link TaskUser}'s `stop`), if any. */
export function stopIn(user: TaskUser, text: string): string | undefined {
  return user.stop?.find((s) => text.includes(s));
}
