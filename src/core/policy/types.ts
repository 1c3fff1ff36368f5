import type { IDisposable } from '../base/disposable';
import type { Event } from '../base/event';
import type { ActParse } from '../protocol/actParser';
import type { RehearsalParse } from '../protocol/rehearsalParser';
import type { ChatMessage, ToolDefinition } from '../protocol/types';
import type { FinishReason, PolicyInfo, SampledTokens, TokenCounts } from '../trace/format/schema';
import type { SamplingSettings } from './sampling/sampling';

export type { FinishReason } from '../trace/format/schema';

/** Options every generation takes. */
export interface GenerationOptions {
  /** An episode-scoped key: the policy keeps its KV cache between calls with the same key. */
  session?: string;
  sampling?: Partial<SamplingSettings>;
  maxTokens?: number;
  signal?: AbortSignal;
}

/** The act role: the conversation and the tools, to the policy's next turn. */
export interface ActRequest extends GenerationOptions {
  messages: ChatMessage[];
  /** The task being played (the reference policy reads its solution; models ignore it). */
  taskId?: string;
  tools: ToolDefinition[];
  onToken?: (delta: string) => void;
}

/** The policy's turn: its raw text and how it parses. */
export interface ActResult {
  text: string;
  /**
   * The text as the model sampled it, when `text` differs from it: a model that reads identifiers as
   * slots writes placeholders (`C#5`) that `text` reveals (`C0000005`). Training rows use it, so that
   * the tokens trained are the tokens sampled.
   */
  sampledText?: string;
  /** A served model's sampled token ids and log-probs, when asked for and given ({@link SampledTokens}). */
  sampledTokens?: SampledTokens;
  parse: ActParse;
  finish: FinishReason;
  tokens: TokenCounts;
  latencyMs: number;
}

/** The rehearse role: a rehearse prompt (see `buildRehearsePrompt`) to `n` predicted responses. */
export interface RehearseRequest extends GenerationOptions {
  messages: ChatMessage[];
  /** Samples in one batched call (default 1). */
  n?: number;
  onToken?: (sample: number, delta: string) => void;
}

/** One predicted response. */
export interface RehearsalSample {
  text: string;
  /** The text as the model sampled it, when `text` differs from it ({@link ActResult.sampledText}). */
  sampledText?: string;
  sampledTokens?: SampledTokens;
  parse: RehearsalParse;
  finish: FinishReason;
}

/** The rehearse role's answer. */
export interface RehearseResult {
  samples: RehearsalSample[];
  tokens: TokenCounts;
  latencyMs: number;
}

/**
 * A policy: acts and rehearses. Implemented by the local ONNX host, an OpenAI-compatible endpoint,
 * and the reference policy of a task.
 */
export interface Policy extends IDisposable {
  readonly info: PolicyInfo;
  /** False for a policy that only acts (the reference policy): no rehearsals are recorded. */
  readonly rehearses?: boolean;
  /** True for a model that reads identifiers as slots (`IdentifierSlots`): its training rows must too. */
  readonly identifierSlots?: boolean;
  act(request: ActRequest): Promise<ActResult>;
  rehearse(request: RehearseRequest): Promise<RehearseResult>;
  /** Frees an episode's cached state. */
  endSession(session: string): void;
  /** Fires when the policy can no longer serve (its process died). */
  readonly onDidFail?: Event<Error>;
}

/** Default maximum new tokens of an act turn and of a rehearsal. */
export const DEFAULT_MAX_TOKENS = { act: 384, rehearse: 384 } as const;
