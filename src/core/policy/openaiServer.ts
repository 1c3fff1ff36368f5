import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { canonicalJson } from '../base/canonicalJson';
import { loopbackCallerRefusal } from '../base/loopbackCaller';
import { StudioError, errorMessage } from '../base/errors';
import type { JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import { formatToolCalls, parseActOutput } from '../protocol/actParser';
import type { ChatMessage, ToolDefinition } from '../protocol/types';
import type { PolicyHostClient } from './hostClient';
import { IdentifierSlots } from '../protocol/identifierSlots';
import { GREEDY } from './sampling/sampling';
import type { StudioErrorCode } from '../base/errorCodes';
import { readOptionalNumber } from '../base/numbers';
import type { OutsideNumberSpec } from '../base/numbers';
import { OUTSIDE_NUMBERS } from '../base/outsideNumbers';
import { DEFAULT_MAX_TOKENS } from './types';

/** Largest request body accepted (a long conversation with tools is far smaller). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Most samples of one request (they decode as one batch). */

/** Policy host errors caused by what the request asked for. */
const REQUEST_FAULTS = new Set(['PROMPT_TOO_LONG', 'EMPTY_PROMPT']);

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The studio's code, when one says more than the status (`REQUEST_INVALID`). */
    readonly code?: StudioErrorCode,
  ) {
    super(message);
  }
}

/** A number of the request body through the one reader, in its documented range (else HTTP 400). */
function bodyNumber(
  body: Record<string, unknown>,
  spec: OutsideNumberSpec,
  fallback: number,
): number {
  const read = readOptionalNumber(body[spec.name.slice(1, -1)], spec, fallback);
  if (!read.ok) throw new HttpError(400, `${read.error.message}.`, read.error.code);
  return read.value;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** OpenAI chat messages to the studio's: tool calls become protocol blocks in the assistant text. */
export function fromOpenAIMessages(messages: unknown): ChatMessage[] {
  if (!Array.isArray(messages) || messages.length === 0)
    throw new HttpError(400, '"messages" must be a non-empty array.');
  return messages.map((m, i) => {
    if (!isJsonObject(m)) throw new HttpError(400, `messages[${i}] is not an object.`);
    const role = m['role'];
    if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool')
      throw new HttpError(400, `messages[${i}].role must be system, user, assistant or tool.`);
    const content = Array.isArray(m['content'])
      ? m['content'].map((p) => (isJsonObject(p) ? str(p['text']) : '')).join('')
      : str(m['content']);
    if (role === 'assistant' && Array.isArray(m['tool_calls'])) {
      const calls = m['tool_calls'].map((c) => {
        const fn = isJsonObject(c) && isJsonObject(c['function']) ? c['function'] : {};
        let args: JsonValue = fn['arguments'] ?? {};
        if (typeof args === 'string') {
          try {
            args = JSON.parse(args) as JsonValue;
          } catch {
            /* keep the string */
          }
        }
        return { name: str(fn['name']), arguments: args };
      });
      return { role, content: content + formatToolCalls(calls) };
    }
    return role === 'tool'
      ? { role, content, name: str(m['name']) || undefined }
      : { role, content };
  });
}

function toolsOf(tools: unknown): ToolDefinition[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw new HttpError(400, '"tools" must be an array.');
  return tools.map((t, i) => {
    const fn = isJsonObject(t) && isJsonObject(t['function']) ? t['function'] : undefined;
    if (!fn || typeof fn['name'] !== 'string')
      throw new HttpError(
        400,
        `tools[${i}] must be {"type": "function", "function": {"name", ...}}.`,
      );
    return {
      name: fn['name'],
      description: str(fn['description']),
      parameters: fn['parameters'] ?? { type: 'object' },
    };
  });
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'Request body too large.');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'The request body is not valid JSON.');
  }
}

/** How `OpenAICompatibleServer` serves. */
export interface ServerOptions {
  /** The model reads identifiers as slots (`IdentifierSlots`): prompts hidden, outputs revealed here. */
  identifierSlots?: boolean;
  /** Requests must carry this key as `Authorization: Bearer <key>` (`rehearse serve` always sets one). */
  apiKey?: string;
}

/**
 * Serves a local policy as an OpenAI-compatible chat-completions endpoint (`rehearse serve`), so that
 * other tools can use it, with tool calls returned as structured `tool_calls` like a Hermes-style
 * parser in vLLM. Loopback only by default.
 */
export class OpenAICompatibleServer {
  private server: Server | undefined;

  private readonly slots: boolean;
  private readonly apiKey: Buffer | undefined;
  private port = 0;

  constructor(
    private readonly host: PolicyHostClient,
    private readonly modelName: string,
    options: ServerOptions = {},
  ) {
    this.slots = options.identifierSlots === true;
    this.apiKey = options.apiKey ? Buffer.from(options.apiKey, 'utf8') : undefined;
  }

  /** Starts listening; resolves with the base URL (`http://127.0.0.1:PORT/v1`). */
  async listen(port = 0, hostname = '127.0.0.1'): Promise<string> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, hostname, () => resolve());
    });
    const address = this.server.address() as AddressInfo;
    this.port = address.port;
    return `http://${hostname}:${address.port}/v1`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /**
   * Only this machine's own clients: the Host header must name the loopback address and port served
   * (a page that rebinds its DNS name to 127.0.0.1 sends its own name), a browser's Origin must be
   * loopback too, and with a key the request must carry it as `Authorization: Bearer <key>`.
   */
  private checkCaller(req: IncomingMessage): void {
    const refusal = loopbackCallerRefusal(
      req,
      this.port,
      this.apiKey,
      'Missing or wrong API key: send "Authorization: Bearer <key>" with the key `rehearse serve` printed (or set with --api-key / REHEARSAL_SERVE_API_KEY).',
    );
    if (refusal) throw new HttpError(refusal.status, refusal.message);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    try {
      this.checkCaller(req);
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method === 'GET' && url.pathname === '/v1/models') {
        return send(200, {
          object: 'list',
          data: [{ id: this.modelName, object: 'model', owned_by: 'rehearsal-studio' }],
        });
      }
      if (req.method !== 'POST' || url.pathname !== '/v1/chat/completions')
        throw new HttpError(
          404,
          `No route ${req.method} ${url.pathname}; use POST /v1/chat/completions.`,
        );
      const body = await readBody(req);
      if (!isJsonObject(body)) throw new HttpError(400, 'The request body must be a JSON object.');
      if (body['stream'] === true)
        throw new HttpError(
          400,
          'Streaming responses are not supported by this server; send "stream": false.',
        );
      const tools = toolsOf(body['tools']);
      const n = bodyNumber(body, OUTSIDE_NUMBERS.httpN, 1);
      const maxTokens = bodyNumber(body, OUTSIDE_NUMBERS.httpMaxTokens, DEFAULT_MAX_TOKENS.act);
      const minTokens = bodyNumber(body, OUTSIDE_NUMBERS.httpMinTokens, 0);
      // As vLLM answers it: a floor above the ceiling is the request's fault.
      if (minTokens > maxTokens)
        throw new HttpError(
          400,
          `"min_tokens" (${minTokens}) must not exceed "max_tokens" (${maxTokens}).`,
          'REQUEST_INVALID',
        );
      const slots = this.slots ? new IdentifierSlots() : undefined;
      const messages = fromOpenAIMessages(body['messages']);
      const generated = await this.host.generate({
        messages: slots ? slots.hideMessages(messages) : messages,
        tools,
        n,
        maxTokens,
        ...(minTokens > 0 ? { minTokens } : {}),
        sampling: {
          ...GREEDY,
          temperature: bodyNumber(body, OUTSIDE_NUMBERS.httpTemperature, GREEDY.temperature),
          topP: bodyNumber(body, OUTSIDE_NUMBERS.httpTopP, 1),
          seed: bodyNumber(body, OUTSIDE_NUMBERS.httpSeed, 0),
        },
      });
      const result = slots
        ? {
            ...generated,
            samples: generated.samples.map((s) => ({ ...s, text: slots.reveal(s.text) })),
          }
        : generated;
      const choices = result.samples.map((s, index) =>
        completionChoice(s, index, tools.length > 0),
      );
      const completion = result.samples.reduce((t, s) => t + s.completionTokens, 0);
      send(200, {
        id: `chatcmpl-${Date.now().toString(36)}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: this.modelName,
        choices,
        usage: {
          prompt_tokens: result.promptTokens,
          completion_tokens: completion,
          total_tokens: result.promptTokens + completion,
        },
      });
    } catch (err) {
      const { status, body } = errorAnswer(err);
      send(status, body);
    }
  }
}

/**
 * One choice of a chat completion: the sample's tool calls when the request offered tools and the
 * sample called some, else its text.
 */
function completionChoice(s: { text: string; finish: string }, index: number, withTools: boolean) {
  const parsed = withTools ? parseActOutput(s.text) : undefined;
  if (parsed?.kind === 'calls') {
    return {
      index,
      finish_reason: 'tool_calls',
      message: {
        role: 'assistant',
        content: parsed.preamble || null,
        tool_calls: parsed.calls.map((c, i) => ({
          id: `call_${index}_${i}`,
          type: 'function',
          function: { name: c.name, arguments: canonicalJson(c.arguments) },
        })),
      },
    };
  }
  return {
    index,
    finish_reason: s.finish === 'length' ? 'length' : 'stop',
    message: { role: 'assistant', content: s.text },
  };
}

/** The status and OpenAI-shaped error body a failed request is answered with. */
function errorAnswer(err: unknown): { status: number; body: unknown } {
  // A prompt the model cannot take is the request's fault, as vLLM answers it.
  const status =
    err instanceof HttpError
      ? err.status
      : err instanceof StudioError && REQUEST_FAULTS.has(err.code)
        ? 400
        : 500;
  const code = err instanceof HttpError ? err.code : undefined;
  return {
    status,
    body: {
      error: {
        message: errorMessage(err),
        type: status === 500 ? 'server_error' : 'invalid_request_error',
        ...(code ? { code } : {}),
      },
    },
  };
}
