import { NotificationType, RequestType, RequestType0 } from 'vscode-jsonrpc';
import type { ChatMessage, ToolDefinition } from '../protocol/types';
import type { DeviceReport, DeviceSetting } from './onnx/device';
import type { SamplingSettings } from './sampling';
import type { FinishReason } from './types';

/**
 * The JSON-RPC protocol between a studio process (extension host or CLI) and the policy host child
 * process. The host only generates text; parsing stays with the caller's protocol module.
 */
export namespace HostProtocol {
  export interface InitializeParams {
    modelDir: string;
    device: DeviceSetting;
    /** Intra-op threads; absent = pick by model size. */
    threads?: number;
  }
  export interface InitializeResult {
    device: DeviceReport;
    model: { dir: string; layers: number; vocabSize: number; maxPositions: number };
  }
  export const initialize = new RequestType<InitializeParams, InitializeResult, void>('initialize');

  export interface GenerateParams {
    /** Correlates streamed tokens with this request. */
    requestId: number;
    messages: ChatMessage[];
    /** Tools for the chat template (act turns); empty for rehearse prompts. */
    tools: ToolDefinition[];
    session?: string;
    n: number;
    maxTokens: number;
    sampling: SamplingSettings;
    stopStrings?: string[];
    stream: boolean;
  }
  export interface GenerateResult {
    samples: { text: string; finish: FinishReason; completionTokens: number }[];
    promptTokens: number;
    prefilled: number;
    reused: number;
    prefillMs: number;
    decodeMs: number;
    decodeSteps: number;
  }
  export const generate = new RequestType<GenerateParams, GenerateResult, void>('generate');

  export const endSession = new NotificationType<{ session: string }>('endSession');

  export interface TokenParams {
    requestId: number;
    sample: number;
    delta: string;
  }
  export const token = new NotificationType<TokenParams>('token');

  export interface Stats {
    requests: number;
    promptTokens: number;
    prefilled: number;
    reused: number;
    completionTokens: number;
    decodeMs: number;
    decodeSteps: number;
  }
  export const stats = new RequestType0<Stats, void>('stats');
  export const shutdown = new RequestType0<void, void>('shutdown');
}
