import { NotificationType, RequestType, RequestType0 } from 'vscode-jsonrpc';
import type { ChatMessage, ToolDefinition } from '../protocol/types';
import type { DeviceReport, DeviceSetting } from './onnx/device';
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
}
/** The device chosen (with why others were not) and the model's shape. */
export interface InitializeResult {
  device: DeviceReport;
  model: { dir: string; layers: number; vocabSize: number; maxPositions: number };
}
/** Loads (or reloads) the model. */
export const initialize = new RequestType<InitializeParams, InitializeResult, void>('initialize');

/** A chat prompt to generate for: `n` samples, batched. */
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

/** Counters since the host started. */
export interface Stats {
  requests: number;
  promptTokens: number;
  prefilled: number;
  reused: number;
  completionTokens: number;
  decodeMs: number;
  decodeSteps: number;
}
/** Reads the counters. */
export const stats = new RequestType0<Stats, void>('stats');
/** Releases the model and exits. */
export const shutdown = new RequestType0<void, void>('shutdown');
