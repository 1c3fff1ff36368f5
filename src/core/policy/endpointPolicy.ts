import OpenAI from 'openai';
import { canonicalJson } from '../base/canonicalJson';
import { Disposable } from '../base/disposable';
import { StudioError, errorMessage } from '../base/errors';
import { formatToolCalls, parseActOutput } from '../protocol/actParser';
import { jsonTextWithLiterals } from '../protocol/pythonJsonLoads';
import { parseRehearsalOutput } from '../protocol/rehearsalParser';
import type { ChatMessage, ToolDefinition } from '../protocol/types';
import { toFunctionSchema } from '../protocol/types';
import type { JsonValue } from '../base/json';
import type { PolicyInfo, SampledTokens } from '../trace/format/schema';
import type { SamplingSettings } from './sampling/sampling';
import { GREEDY } from './sampling/sampling';
import type {
  ActRequest,
  ActResult,
  FinishReason,
  Policy,
  RehearseRequest,
  RehearseResult,
} from './types';
import { DEFAULT_MAX_TOKENS } from './types';

/** Retries of one request (429, 5xx, lost connection) before its error ends the episode. */
export const ENDPOINT_RETRIES = 4;

/** How to reach an OpenAI-compatible server (vLLM, SGLang, llama.cpp server, ...). */
export interface EndpointOptions {
  /** Base URL, e.g. `http://127.0.0.1:8000/v1`. */
  baseURL: string;
  model: string;
  /** From the environment or the editor's secret storage; never from settings files. */
  apiKey?: string;
  sampling?: Partial<SamplingSettings>;
  timeoutMs?: number;
  /**
   * Ask for the sampled token ids and their log-probs (`logprobs` and vLLM's `return_token_ids`) and
   * record them ({@link SampledTokens}): GRPO rollouts of a served model. Off by default: servers that
   * do not know `return_token_ids` (OpenAI's) refuse it.
   */
  recordTokens?: boolean;
}

/** A choice as vLLM returns it with `return_token_ids`: its sampled ids beside the standard fields. */
type ChoiceWithTokens = OpenAI.Chat.Completions.ChatCompletion.Choice & { token_ids?: unknown };

/** The sampled tokens of a choice, when the server gave ids and one log-prob per id; else undefined. */
export function sampledTokensOf(choice: ChoiceWithTokens): SampledTokens | undefined {
  const ids = choice.token_ids;
  const logprobs = choice.logprobs?.content?.map((c) => c.logprob);
  if (
    !Array.isArray(ids) ||
    !logprobs ||
    ids.length !== logprobs.length ||
    ids.length > MAX_SAMPLED_TOKENS
  )
    return undefined;
  if (!ids.every((id) => Number.isInteger(id) && id >= 0)) return undefined;
  if (!logprobs.every((l) => typeof l === 'number' && Number.isFinite(l) && l <= 0))
    return undefined;
  return { ids: ids as number[], logprobs };
}

/** The most sampled tokens one generation records (the trace schema's bound). */
const MAX_SAMPLED_TOKENS = 65_536;

type OpenAIMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/**
 * Converts the studio's messages (assistant turns as raw text) to the OpenAI shape: tool-call
 * blocks become `tool_calls`, and tool messages get the matching `tool_call_id`, so that the
 * server's own chat template renders them.
 */
export function toOpenAIMessages(messages: readonly ChatMessage[]): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  const pendingIds: string[] = [];
  let counter = 0;
  for (const m of messages) {
    if (m.role === 'assistant') {
      // A turn only EnvACE's Python takes (a run in the envace dialect: NaN arguments) keeps its calls too.
      const studio = parseActOutput(m.content);
      const parsed =
        studio.kind === 'error' ? parseActOutput(m.content, { dialect: 'envace' }) : studio;
      const argumentsText = studio.kind === 'error' ? jsonTextWithLiterals : canonicalJson;
      if (parsed.kind === 'calls') {
        const ids = parsed.calls.map(() => `call_${++counter}`);
        pendingIds.push(...ids);
        out.push({
          role: 'assistant',
          content: parsed.preamble || null,
          tool_calls: parsed.calls.map((c, i) => ({
            id: ids[i],
            type: 'function',
            function: { name: c.name, arguments: argumentsText(c.arguments) },
          })),
        });
      } else out.push({ role: 'assistant', content: m.content });
    } else if (m.role === 'tool') {
      out.push({
        role: 'tool',
        content: m.content,
        tool_call_id: m.tool_call_id ?? pendingIds.shift() ?? `call_${++counter}`,
      });
    } else out.push({ role: m.role, content: m.content });
  }
  return out;
}

function finishOf(reason: string | null | undefined): FinishReason {
  return reason === 'length'
    ? 'length'
    : reason === 'stop' || reason === 'tool_calls'
      ? 'eos'
      : 'eos';
}

/** The raw text of a completion: its content, then its structured tool calls as protocol blocks. */
export function completionText(message: OpenAI.Chat.Completions.ChatCompletionMessage): string {
  const calls = (message.tool_calls ?? [])
    .filter(
      (c): c is OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall =>
        c.type === 'function',
    )
    .map((c) => {
      let args: JsonValue;
      try {
        args = JSON.parse(c.function.arguments) as JsonValue;
      } catch {
        args = c.function.arguments;
      }
      return { name: c.function.name, arguments: args };
    });
  return (message.content ?? '') + formatToolCalls(calls);
}

/** A policy served by an OpenAI-compatible endpoint, through the official `openai` package. */
export class EndpointPolicy extends Disposable implements Policy {
  readonly info: PolicyInfo;
  private readonly client: OpenAI;
  private readonly defaults: SamplingSettings;

  constructor(private readonly options: EndpointOptions) {
    super();
    try {
      new URL(options.baseURL);
    } catch {
      throw new StudioError(
        'INVALID_ENDPOINT',
        `"${options.baseURL}" is not a URL; give the server's base URL, e.g. http://127.0.0.1:8000/v1.`,
      );
    }
    this.client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey || 'not-needed',
      timeout: options.timeoutMs ?? 120_000,
      // The SDK retries 408, 409, 429 and 5xx answers and lost connections, backing off
      // exponentially (0.5 s doubling, at most 8 s, or as Retry-After says): a server busy with the
      // N requests a run keeps in flight gets time, and a request gives up after that many.
      maxRetries: ENDPOINT_RETRIES,
    });
    this.info = { kind: 'endpoint', id: `${options.baseURL} ${options.model}` };
    this.defaults = { ...GREEDY, ...options.sampling };
  }

  async act(request: ActRequest): Promise<ActResult> {
    const started = performance.now();
    const sampling = { ...this.defaults, ...request.sampling };
    const tools = request.tools.map((t: ToolDefinition) =>
      toFunctionSchema(t),
    ) as OpenAI.Chat.Completions.ChatCompletionTool[];
    const response = await this.call(() =>
      this.client.chat.completions.create(
        {
          model: this.options.model,
          messages: toOpenAIMessages(request.messages),
          ...(tools.length ? { tools } : {}),
          temperature: sampling.temperature,
          top_p: sampling.topP,
          seed: sampling.seed,
          max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS.act,
          ...this.tokenOptions(),
        },
        { signal: request.signal },
      ),
    );
    const choice = response.choices[0];
    const text = completionText(choice.message);
    request.onToken?.(text);
    const sampledTokens = this.options.recordTokens ? sampledTokensOf(choice) : undefined;
    return {
      text,
      ...(sampledTokens ? { sampledTokens } : {}),
      parse: parseActOutput(text),
      finish: finishOf(choice.finish_reason),
      tokens: {
        prompt: response.usage?.prompt_tokens ?? 0,
        completion: response.usage?.completion_tokens ?? 0,
      },
      latencyMs: performance.now() - started,
    };
  }

  async rehearse(request: RehearseRequest): Promise<RehearseResult> {
    const started = performance.now();
    const sampling = { ...this.defaults, ...request.sampling };
    const response = await this.call(() =>
      this.client.chat.completions.create(
        {
          model: this.options.model,
          messages: toOpenAIMessages(request.messages),
          n: request.n ?? 1,
          temperature: sampling.temperature,
          top_p: sampling.topP,
          seed: sampling.seed,
          max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS.rehearse,
          ...this.tokenOptions(),
        },
        { signal: request.signal },
      ),
    );
    const samples = response.choices.map((c) => {
      const text = c.message.content ?? '';
      request.onToken?.(c.index, text);
      const sampledTokens = this.options.recordTokens ? sampledTokensOf(c) : undefined;
      return {
        text,
        parse: parseRehearsalOutput(text),
        finish: finishOf(c.finish_reason),
        ...(sampledTokens ? { sampledTokens } : {}),
      };
    });
    return {
      samples,
      tokens: {
        prompt: response.usage?.prompt_tokens ?? 0,
        completion: response.usage?.completion_tokens ?? 0,
      },
      latencyMs: performance.now() - started,
    };
  }

  /** The request fields that ask for the sampled tokens ({@link EndpointOptions.recordTokens}). */
  private tokenOptions(): { logprobs?: boolean } {
    // return_token_ids is vLLM's field: the SDK sends every field of the body as given.
    return this.options.recordTokens
      ? ({ logprobs: true, return_token_ids: true } as { logprobs: boolean })
      : {};
  }

  endSession(): void {
    // The server manages its own prefix cache.
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof OpenAI.APIConnectionError) {
        throw new StudioError(
          'ENDPOINT_UNREACHABLE',
          `Cannot reach ${this.options.baseURL}: ${errorMessage(err)}. Is the server running?`,
        );
      }
      if (err instanceof OpenAI.AuthenticationError) {
        throw new StudioError(
          'ENDPOINT_AUTH',
          `${this.options.baseURL} refused the API key. Set it with "Rehearsal: Set Endpoint API Key" or the OPENAI_API_KEY environment variable.`,
        );
      }
      if (err instanceof OpenAI.APIError) {
        throw new StudioError(
          'ENDPOINT_ERROR',
          `${this.options.baseURL} answered ${err.status ?? ''}: ${errorMessage(err)}`,
        );
      }
      throw err;
    }
  }
}
