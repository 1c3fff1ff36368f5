import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A chat completion request as a test's model reads it. */
export interface ChatRequest {
  model: string;
  messages: { role: string; content: string | null }[];
  tools?: unknown[];
  /** The request's `Authorization` header. */
  authorization?: string;
}

/** The assistant message a test's model answers with: a text, or tool calls. */
export type ChatReply =
  | string
  | {
      content: string | null;
      tool_calls?: {
        id: string;
        type: 'function';
        function: { name: string; arguments: string };
      }[];
    };

/** Options of {@link startChatServer}. */
export interface ChatServerOptions {
  /** A key the requests must carry as a bearer token (else 401). */
  key?: string;
  /** The models `GET /v1/models` lists (default: one, `m`). */
  models?: () => string[];
}

/** A running test endpoint: its base URL, the requests it was asked, and how to stop it. */
export interface ChatServer {
  url: string;
  requests: ChatRequest[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/**
 * A real OpenAI-compatible HTTP endpoint on a free local port whose "model" is `reply`: for tests
 * that need a policy, a judge or a client to talk to a server whose answers they choose. A reply
 * may be a promise: a test holds an answer back until it settles (closing ends held requests).
 */
export async function startChatServer(
  reply: (request: ChatRequest) => ChatReply | Promise<ChatReply>,
  options: ChatServerOptions = {},
): Promise<ChatServer> {
  const requests: ChatRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      if (options.key !== undefined && req.headers.authorization !== `Bearer ${options.key}`) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'wrong key', type: 'auth' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.method === 'GET' && req.url === '/v1/models') {
        const models = options.models?.() ?? ['m'];
        res.end(
          JSON.stringify({ object: 'list', data: models.map((id) => ({ id, object: 'model' })) }),
        );
        return;
      }
      const request = {
        ...(JSON.parse(body) as Omit<ChatRequest, 'authorization'>),
        authorization: req.headers.authorization,
      };
      requests.push(request);
      const answer = await reply(request);
      const message = typeof answer === 'string' ? { content: answer } : answer;
      res.end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 0,
          model: request.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', ...message },
              finish_reason: message.tool_calls?.length ? 'tool_calls' : 'stop',
            },
          ],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
