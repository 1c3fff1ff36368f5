import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The delay of the test endpoint's every answer, as a busy remote server would take. */
export const ENDPOINT_DELAY_MS = 200;

/** A running {@link slowEndpoint}. */
export interface SlowEndpoint {
  url: string;
  /** Requests answered so far. */
  requests(): Promise<number>;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible endpoint that answers every request after {@link ENDPOINT_DELAY_MS}: an act
 * request calls the task's first tool and, once a tool answered, gives a final answer; a rehearse
 * request (no tools) rehearses `{"ok": true}`. Each episode makes three requests. It runs in a
 * process of its own, as a remote endpoint would: reading the requests is not the runner's work.
 */
export async function slowEndpoint(): Promise<SlowEndpoint> {
  const child = fork(__filename, ['--serve'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const asked = (what: string) =>
    new Promise<{ url?: string; requests?: number }>((resolve, reject) => {
      const onMessage = (m: { url?: string; requests?: number }) => {
        child.off('exit', onExit);
        resolve(m);
      };
      const onExit = (code: number | null) => reject(new Error(`the endpoint exited (${code})`));
      child.once('message', onMessage);
      child.once('exit', onExit);
      if (what) child.send(what);
    });
  const { url } = await asked('');
  return {
    url: url!,
    requests: async () => (await asked('requests')).requests!,
    close: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      await exited;
    },
  };
}

function serve(): void {
  let requests = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      requests++;
      const asked = JSON.parse(body) as {
        messages: { role: string }[];
        tools?: { function: { name: string } }[];
      };
      const message = !asked.tools?.length
        ? { role: 'assistant', content: '<execution_result>\n{"ok": true}\n</execution_result>' }
        : asked.messages.some((m) => m.role === 'tool')
          ? { role: 'assistant', content: 'Done.' }
          : {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'call_1',
                  type: 'function',
                  function: { name: asked.tools[0].function.name, arguments: '{}' },
                },
              ],
            };
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: `c${requests}`,
            object: 'chat.completion',
            created: 0,
            model: 'slow',
            choices: [
              {
                index: 0,
                message,
                finish_reason: 'tool_calls' in message ? 'tool_calls' : 'stop',
              },
            ],
            usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
          }),
        );
      }, ENDPOINT_DELAY_MS);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
  });
  process.on('message', () => process.send!({ requests }));
  process.on('disconnect', () => process.exit(0));
}

if (require.main === module && process.argv.includes('--serve')) serve();
