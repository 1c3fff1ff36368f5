import type { JsonValue } from '../../base/json';
import type { CallOutcome, EnvironmentSnapshot } from '../../env/types';

/** One tool call of an episode with what came back. */
export interface TranscriptCall {
  name: string;
  arguments: JsonValue;
  /** What the environment answered; absent when the call was never executed. */
  outcome?: Pick<CallOutcome, 'response' | 'error'>;
}

/** What happened in answer to one user turn: the calls in order, then the final answer. */
export interface TranscriptTurn {
  user: string;
  calls: TranscriptCall[];
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
