import { NotificationType, RequestType, RequestType0 } from 'vscode-jsonrpc';
import type { ChatMessage, ToolDefinition } from '../protocol/types';
import type { DeviceReport, DeviceSetting } from './onnx/device';
import type { KvCacheMode } from './onnx/decoder';
import type { SamplingSettings } from './sampling/sampling';
import type { FinishReason } from './types';

// The JSON-RPC protocol between a studio process (extension host or CLI) and the policy host child
// process. The host only generates text; parsing stays with the caller's protocol module.
// Import it as a namespace: `import * as HostProtocol from './hostProtocol'`.
/** Loads a model folder on a device. */
export interface InitializeParams {
  modelDir: string;
  device: DeviceSetting;
  /** Intra-op threads; absent = pick by model size. */
  threads?: number;
  /** Most sequences decoding at once across requests; absent = 64. */
  maxSequences?: number;
  /** Most KV cache in MiB (requests in flight and idle sessions); absent = 1024. */
  kvCacheMb?: number;
  /** How the KV cache is kept; absent = `slots` where the folder has the slots graph (see KvCacheMode). */
  kvCache?: KvCacheMode;
}
/** The device chosen (with why others were not) and the model's shape. */
export interface InitializeResult {
  device: DeviceReport;
  model: { dir: string; layers: number; vocabSize: number; maxPositions: number };
  /** The bounds of continuous batching: requests past them wait their turn. */
  batch?: { maxSequences: number; maxCachedTokens: number; kvCache?: KvCacheMode };
}
/** Loads (or reloads) the model. */
export const initialize = new RequestType<InitializeParams, InitializeResult, void>('initialize');

/**
 * A chat prompt to generate for: `n` samples, batched. Requests sent while others decode are decoded
 * together with them (continuous batching); each keeps its own session cache and sampler.
 */
export interface GenerateParams {
  /** Correlates streamed tokens with this request. */
  requestId: number;
  messages: ChatMessage[];
  /** Tools for the chat template (act turns); empty for rehearse prompts. */
  tools: ToolDefinition[];
  session?: string;
  n: number;
  maxTokens: number;
  /** The end token does not stop a sample before this many tokens (benchmarks time a fixed length). */
  minTokens?: number;
  sampling: SamplingSettings;
  stopStrings?: string[];
  /** Constrain a tool call's name to these (decoding constrained to the offered tools). */
  toolNames?: string[];
  stream: boolean;
}
/** Raw texts and the token counters of one generation. */
export interface GenerateResult {
  samples: { text: string; finish: FinishReason; completionTokens: number }[];
  promptTokens: number;
  prefilled: number;
  reused: number;
  prefillMs: number;
  decodeMs: number;
  decodeSteps: number;
  /** The n samples read one shared copy of the prompt's cache (the model folder's cascade graph). */
  sharedPrefix: boolean;
  /** The most sequences (of every request in flight) one of this request's decode passes held. */
  batchRows?: number;
  /** Milliseconds it waited for room in the batch before its prefill. */
  queuedMs?: number;
}
/** Generates; cancellable with `$/cancelRequest`. */
export const generate = new RequestType<GenerateParams, GenerateResult, void>('generate');

/** Frees an episode's KV cache. */
export const endSession = new NotificationType<{ session: string }>('endSession');

/** A streamed piece of one sample's text. */
export interface TokenParams {
  requestId: number;
  sample: number;
  delta: string;
}
/** Sent while generating when `stream` is set. */
export const token = new NotificationType<TokenParams>('token');

/**
 * Counters since the host started. `promptTokens` = `prefilled` + `reused` (a request cancelled while
 * it waited for room in the batch reads no prompt token); `decodeSteps` and `decodeMs` add up each request's own, so with requests decoded
 * together they exceed the passes run and the time spent: `decodePasses` counts each pass once.
 */
export interface Stats {
  requests: number;
  promptTokens: number;
  prefilled: number;
  reused: number;
  completionTokens: number;
  decodeMs: number;
  decodeSteps: number;
  /** Forward passes after prefills, a pass shared by several requests counted once. */
  decodePasses?: number;
  /** Sequences summed over those passes (decodeRows / decodePasses: the mean batch). */
  decodeRows?: number;
  /** The most sequences one pass decoded. */
  largestBatch?: number;
  /** Prefill passes and the prompt tokens they encoded. */
  prefillPasses?: number;
  prefillTokens?: number;
  /** Time inside the graph's forward passes (prefill and decode), the rest of the host's work left out. */
  prefillForwardMs?: number;
  decodeForwardMs?: number;
}
/**
 * The environment variable of `npm run bench:profile` (bench/profile.ts): a folder where the policy
 * host writes a CPU profile (`host/*.cpuprofile`, Node's `--cpu-prof`, asked for by the client) and,
 * when it shuts down, its counters (`host/stats.json`). A diagnostic: nothing else sets it.
 */
export const PROFILE_DIR_VARIABLE = 'REHEARSAL_PROFILE_DIR';

/** Reads the counters. */
export const stats = new RequestType0<Stats, void>('stats');
/** Releases the model and exits. */
export const shutdown = new RequestType0<void, void>('shutdown');

/**
 * The lines the host writes on stderr before and after it tries a device (`<begin> cuda`).
 * onnxruntime and Dawn report their probing (a provider library that is not there, no Vulkan
 * loader) from native code straight to the process's stderr; the client tells those lines from the
 * host's own by what lies between these two.
 */
export const PROBE_BEGIN = '\u001e rehearsal probe begin';
/** Ends what {@link PROBE_BEGIN} began. */
export const PROBE_END = '\u001e rehearsal probe end';
