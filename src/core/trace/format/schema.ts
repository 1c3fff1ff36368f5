import type { JsonObject, JsonValue } from '../../base/json';
import type { FidelityScores } from '../../fidelity/scores';
import type { DiffKind } from '../../fidelity/structuralDiff';
import type { ToolResultContent } from '../../fidelity/responseValue';
import type { ActParseErrorCode, RehearsalParseErrorCode } from '../../protocol/codes';
import type { RehearsalParse } from '../../protocol/rehearsalParser';
import type { ToolDefinition } from '../../protocol/types';

/** The trace schema version this studio writes (`v` on every event). See docs/trace-format.md. */
export const TRACE_SCHEMA_VERSION = 1;

/** How rehearsal and reality are combined in a run (ARCHITECTURE.md, Modes). */
export type RunMode = 'shadow' | 'imagine' | 'private' | 'replay';

/** Fields every event carries. */
interface EventBase {
  v: typeof TRACE_SCHEMA_VERSION;
  /** When the event was written (ISO 8601). */
  ts: string;
}

/** Which policy a run used. */
export interface PolicyInfo {
  kind: 'onnx' | 'endpoint' | 'reference' | 'recorded';
  /** Model folder, endpoint URL and model name, or `reference`. */
  id: string;
  device?: string;
  /** For a local model: each device tried in order, and why the ones before `device` were not used. */
  devices?: { device: string; ok: boolean; reason?: string }[];
}

/** A run starts: one per trace file, always its first event. */
export interface RunEvent extends EventBase {
  type: 'run';
  runId: string;
  mode: RunMode;
  policy: PolicyInfo;
  /** Ids of the tasks the run plays. */
  tasks?: string[];
  /** Settings that shape the episodes (sampling, rehearse prompt options, audit, budget). */
  settings?: { [key: string]: JsonValue };
  /** For replay runs: the trace whose calls are rehearsed again. */
  source?: string;
  /** Who played the tasks' simulated users (τ²'s user simulator), when an endpoint did. */
  user?: UserPlayer;
  studioVersion?: string;
}

/** The endpoint and model that played the tasks' simulated users (`--user-endpoint`, `--user-model`). */
export interface UserPlayer {
  endpoint: string;
  model: string;
}

/** An episode starts: one attempt at a task. */
export interface EpisodeEvent extends EventBase {
  type: 'episode';
  episodeId: string;
  index: number;
  taskId: string;
  mode: RunMode;
  /** The task's first user message. */
  instruction?: string;
  /** The task's system prompt, as the policy was given it. */
  system?: string;
  /**
   * Private rehearsal: what the policy read as a system message of its own after `system` (the
   * committed episode's rehearsal memory, or a sequential attempt's earlier attempts).
   */
  context?: string;
  /** The tools offered to the policy. */
  tools?: ToolDefinition[];
  /** For private rehearsal: `imagined` episodes condense into the memory of the `committed` one. */
  role?: 'imagined' | 'committed';
}

/** A tool call the policy asked for, with the id its rehearsal and actual events refer to. */
export interface TurnCall {
  callId: string;
  name: string;
  arguments: JsonValue;
}

/** How a turn's raw text was understood. */
export type TurnParse =
  | { kind: 'calls'; calls: TurnCall[] }
  | { kind: 'final'; answer: string }
  | { kind: 'error'; code: ActParseErrorCode; message: string };

/** Token counters of one generation: prompt tokens, of which `reused` came from the cache. */
export interface TokenCounts {
  prompt: number;
  completion: number;
  reused?: number;
}

/** Why a generation stopped: the end token, a stop string, the token limit, or a cancel. */
export type FinishReason = 'eos' | 'stop' | 'length' | 'cancelled';

/**
 * How a generation was sampled, as training rows need it: the text as the model wrote it when the
 * recorded text differs (identifier slots revealed), and why it stopped (a row is trained with the
 * end token only when the model sampled it).
 */
export interface SampledText {
  /** The model's text before its identifiers were revealed, when it differs from `text`. */
  sampled?: string;
  finish?: FinishReason;
  /** The token ids a served model sampled and their log-probs ({@link SampledTokens}). */
  sampledTokens?: SampledTokens;
}

/**
 * What a server sampled, token by token (vLLM's `return_token_ids` and `logprobs`): the ids, the end
 * token included when it sampled one, and each one's log-prob under the distribution sampled from.
 * Training rows carry them, so that the trainer trains the tokens sampled instead of re-tokenizing.
 */
export interface SampledTokens {
  ids: number[];
  logprobs: number[];
}

/** One act of the policy. */
export interface TurnEvent extends EventBase, SampledText {
  type: 'turn';
  episodeId: string;
  turnId: string;
  index: number;
  /** The user message that came right before this act, if any. */
  user?: string;
  /** The calls the user made with tools of its own before that message (τ²'s dual control). */
  userCalls?: UserCallRecord[];
  /** The policy's raw text. */
  text: string;
  parse: TurnParse;
  tokens?: TokenCounts;
  latencyMs?: number;
}

/** A rehearsal's parsed result, or its parse error and its code (ARCHITECTURE.md, Protocol). */
export type RehearsalResult =
  { ok: true; value: JsonValue } | { ok: false; code: RehearsalParseErrorCode; message: string };

/** A rehearsal parse as the trace records it: the value, or the error's code and message. */
export function rehearsalResult(parse: RehearsalParse): RehearsalResult {
  return parse.ok
    ? { ok: true, value: parse.value }
    : { ok: false, code: parse.error.code, message: parse.error.message };
}

/**
 * A rehearsal that did not parse and was sampled again (imagined episodes, `rehearsalRetries`): the
 * episode never read it; training rows give it the reward of an episode a rehearsal ends.
 */
export interface RejectedRehearsal extends SampledText {
  text: string;
  result: Extract<RehearsalResult, { ok: false }>;
  tokens?: TokenCounts;
}

/** The policy's predicted response to one call. */
export interface CallRehearsalEvent extends EventBase, SampledText {
  type: 'call.rehearsal';
  episodeId: string;
  turnId: string;
  callId: string;
  tool: string;
  arguments: JsonValue;
  /** The rehearse role's raw text. */
  text: string;
  result: RehearsalResult;
  tokens?: TokenCounts;
  latencyMs?: number;
  /** Earlier samples of this rehearsal that did not parse, in order (the last sample is `text`). */
  rejected?: RejectedRehearsal[];
}

/** Where an actual response came from. */
export type ActualSource = 'mcp' | 'replay' | 'reference';

/** The real tool's response to one call. */
export interface CallActualEvent extends EventBase {
  type: 'call.actual';
  episodeId: string;
  turnId: string;
  callId: string;
  tool: string;
  source: ActualSource;
  /** The tool's result; absent when the call failed before the tool answered (see `error`). */
  response?: ToolResultContent;
  /**
   * Why there is no response: timeout, crashed server, no recorded answer... In the `envace` parse
   * dialect, EnvACE's code and message and the `details` of its `format_tool_error` payload.
   */
  error?: { code: string; message: string; details?: JsonObject };
  server?: string;
  latencyMs?: number;
}

/** Agreement of a call's rehearsal and actual response, computed when both are known. */
export interface FidelityEvent extends EventBase {
  type: 'fidelity';
  episodeId: string;
  callId: string;
  comparable: 'json' | 'text' | 'none';
  reason?: string;
  scores?: FidelityScores;
  counts?: Record<DiffKind, number>;
}

/** One checklist item's verdict; `passed: null` means not evaluated (never silently passed). */
export interface CheckVerdict {
  id: string;
  kind: string;
  weight: number;
  passed: boolean | null;
  /** The item's own score in [0, 1] where its grader gives one (τ²'s reward). */
  score?: number;
  detail?: string;
}

/** How an episode ended. */
export type EpisodeStatus = 'completed' | 'limit' | 'failed' | 'cancelled';

/** An episode ends: its grade and how it ended. */
export interface EpisodeEndEvent extends EventBase {
  type: 'episode.end';
  episodeId: string;
  status: EpisodeStatus;
  /**
   * The episode's reward under the run's rule (`run.settings.reward`; absent in older traces:
   * `studio`): the weighted share of passed checks, in [0, 1]; or, under `envace`, EnvACE's score
   * (Σ passed weights of the answered user turns / user turns), above 1 when the weights are; an
   * imported EnvACE rollout (`settings.source: envace-rollouts`) holds EnvACE's score, any finite
   * number. Null when ungraded.
   */
  reward: number | null;
  success: boolean | null;
  checks?: CheckVerdict[];
  answer?: string;
  error?: { code: string; message: string };
  /** For private rehearsal: the memory the imagined episodes condensed into. */
  memory?: string;
  /** How the task's user in the loop ended the conversation, when it did. */
  userEnd?: UserEnd;
  /**
   * The calls the user made with tools of its own after the last turn (before the message that ended
   * the conversation, or before the episode ended).
   */
  userCalls?: UserCallRecord[];
}

/**
 * One call the task's user made with a tool of its own (τ²'s telecom user on its phone), in the
 * user's environment: not the policy's, never rehearsed. `response` is the tool's result as
 * `call.actual` records one; `error` says why there is none.
 */
export interface UserCallRecord {
  name: string;
  arguments: JsonValue;
  response?: ToolResultContent;
  error?: { code: string; message: string };
  latencyMs?: number;
}

/**
 * How a user in the loop ended the conversation: `stop`, a message with a stop text (`text`: the
 * message, τ²'s `###STOP###` in it); `tool`, the agent's answer after a call of an end tool (`text`:
 * the tool); `done`, a user with nothing more to say (`text`: why: a script that ran out, or τ²'s
 * user with no endpoint to play it).
 */
export interface UserEnd {
  by: 'stop' | 'tool' | 'done';
  text: string;
}

/** A run ends. */
export interface RunEndEvent extends EventBase {
  type: 'run.end';
  runId: string;
  status: 'completed' | 'failed' | 'cancelled';
  error?: { code: string; message: string };
}

/** Any trace event. */
export type TraceEvent =
  | RunEvent
  | EpisodeEvent
  | TurnEvent
  | CallRehearsalEvent
  | CallActualEvent
  | FidelityEvent
  | EpisodeEndEvent
  | RunEndEvent;

/** The `type` of every event. */
export type TraceEventType = TraceEvent['type'];

/** All event types, in the order they appear in an episode. */
export const TRACE_EVENT_TYPES: readonly TraceEventType[] = [
  'run',
  'episode',
  'turn',
  'call.rehearsal',
  'call.actual',
  'fidelity',
  'episode.end',
  'run.end',
];

/** An event as a writer is given it: the writer adds `v` and `ts`. */
export type NewTraceEvent = TraceEvent extends infer E
  ? E extends TraceEvent
    ? Omit<E, 'v' | 'ts'> & { ts?: string }
    : never
  : never;
