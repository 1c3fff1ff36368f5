import type { JsonValue } from '../../base/json';
import type { CallOutcome, EnvironmentSnapshot } from '../../env/types';

/** One tool call of an episode with what came back. */
export interface TranscriptCall {
  name: string;
  arguments: JsonValue;
  /** What the environment answered; absent when the call was never executed. */
  outcome?: Pick<CallOutcome, 'response' | 'error'>;
}

/**
 * One call the task's user made with a tool of its own (τ²'s telecom user on its phone), in the
 * user's environment: `at` 0 before the turn's user message, else after the turn's `at`-th call of
 * the agent; `afterAnswer` after the agent's answer (the user's calls before a message that ended the
 * conversation).
 */
export interface TranscriptUserCall extends TranscriptCall {
  at: number;
  afterAnswer?: boolean;
}

/** What happened in answer to one user turn: the calls in order, then the final answer. */
export interface TranscriptTurn {
  user: string;
  /** The agent's calls (never the user's: {@link userCalls}). */
  calls: TranscriptCall[];
  /** The user's own calls in this turn, in order (τ²'s dual control); absent when it made none. */
  userCalls?: TranscriptUserCall[];
  /** The agent's final answer to this user turn; absent when it never gave one. */
  answer?: string;
}

/** What a grader sees of an episode: the conversation (never rehearsals) and the final state. */
export interface EpisodeTranscript {
  turns: TranscriptTurn[];
  /**
   * How the episode stopped when it stopped on an error (a turn that did not parse, a limit, a tool
   * error that ends episodes): the id of its last act turn (`e1.t3`) and the error's code.
   */
  ended?: { lastTurnId?: string; code: string };
  /** The servers' final state, or the reason it could not be taken. */
  snapshot: { ok: true; value: EnvironmentSnapshot } | { ok: false; error: string };
}
