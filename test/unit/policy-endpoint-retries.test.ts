// The endpoint policy against a busy server on loopback (in this process): retries, then a coded
// error. Against the studio's own server: test/e2e/policy-endpoint.test.ts.
import * as assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { ENDPOINT_RETRIES, EndpointPolicy } from '../../src/core/policy/endpointPolicy';
import { rejects } from '../support/errors';

describe('endpoint policy: a busy server', function () {
  this.timeout(60_000);
  /** A server that answers the first `failures` requests with `status`, then a chat completion. */
  async function flakyServer(status: number, failures: number) {
    let requests = 0;
    const server = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests++;
        if (requests <= failures) {
          res.writeHead(status, { 'content-type': 'application/json', 'retry-after-ms': '20' });
          res.end(JSON.stringify({ error: { message: 'busy', type: 'server_busy' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c1',
            object: 'chat.completion',
            created: 0,
            model: 'm',
            choices: [
              { index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' },
            ],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    return { url, requests: () => requests, close: () => server.close() };
  }
  const act = (policy: EndpointPolicy) =>
    policy.act({
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
      sampling: { temperature: 0 },
      maxTokens: 8,
    });

  it(`retries 429 and 5xx answers (at most ${ENDPOINT_RETRIES} times, backing off) and goes on when the server recovers`, async () => {
    for (const status of [429, 503]) {
      const server = await flakyServer(status, ENDPOINT_RETRIES);
      try {
        const result = await act(new EndpointPolicy({ baseURL: server.url, model: 'm' }));
        assert.equal(result.text, 'done');
        assert.equal(server.requests(), ENDPOINT_RETRIES + 1, `${status}: every retry reached it`);
      } finally {
        server.close();
      }
    }
  });

  it('a server that stays busy past the retries is ENDPOINT_ERROR with its status, after a bounded number of requests', async () => {
    const server = await flakyServer(503, 1000);
    try {
      const err = await rejects(act(new EndpointPolicy({ baseURL: server.url, model: 'm' })));
      assert.equal(err.code, 'ENDPOINT_ERROR');
      assert.match(err.message, /answered 503/);
      assert.equal(server.requests(), ENDPOINT_RETRIES + 1);
    } finally {
      server.close();
    }
  });
});
