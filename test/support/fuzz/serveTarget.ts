import * as assert from 'node:assert/strict';
import { request } from 'node:http';
import fc from 'fast-check';
import type { JsonValue } from '../../../src/core/base/json';
import { PolicyHostClient } from '../../../src/core/policy/hostClient';
import { OpenAICompatibleServer } from '../../../src/core/policy/openaiServer';
import { caseMessage, scriptedModel } from '../scriptedModel';
import { ensurePolicyHostBundle } from '../servers';
import { mutatedJson, mutatedText } from './mutate';
import type { FuzzTarget } from './targets';

/**
 * `rehearse serve`'s HTTP endpoint as a fuzz target: the studio's OpenAI-compatible server over the
 * policy host with the scripted test model, sent generated requests on loopback (methods, paths,
 * Host, Origin and Authorization headers right, wrong and missing, bodies mutated from valid chat
 * requests as JSON and as text). The promise: every request is answered with a status the server
 * documents (200, 400, 401, 403, 404, 413), a JSON body, and for an error a message that is not an
 * internal one; never 500, never a dropped connection; the host still serves afterwards.
 */

const KEY = 'rs-fuzz-key';
const TOOL = {
  type: 'function',
  function: {
    name: 'probe',
    description: 'Probe one case',
    parameters: { type: 'object', properties: { case: { type: 'string' } }, required: ['case'] },
  },
};
const VALID: JsonValue[] = [
  {
    model: 'scripted',
    messages: [{ role: 'user', content: caseMessage('ok') }],
    tools: [TOOL],
    max_tokens: 24,
  },
  {
    model: 'scripted',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ],
    max_tokens: 8,
    temperature: 0.7,
    top_p: 0.9,
    seed: 3,
    n: 2,
  },
  {
    messages: [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'probe', arguments: '{"case":"ok"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"ok":true}' },
    ],
    max_tokens: 8,
  },
];
const VALID_TEXTS = VALID.map((v) => JSON.stringify(v));

interface Sent {
  method: string;
  path: string;
  host: string | undefined;
  origin: string | undefined;
  auth: string | undefined;
  body: string;
}

const sent = (port: number): fc.Arbitrary<Sent> =>
  fc
    .record({
      // About half the requests come from a right caller to the right route, so the body reaches the model.
      route: fc.oneof(
        { weight: 3, arbitrary: fc.constant({ method: 'POST', path: '/v1/chat/completions' }) },
        {
          weight: 2,
          arbitrary: fc.record({
            method: fc.constantFrom('POST', 'GET', 'PUT', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH'),
            path: fc.constantFrom(
              '/v1/chat/completions',
              '/v1/models',
              '/',
              '/v1/chat/completions?stream=true',
              '//v1/chat/completions',
              '/v1/../v1/models',
              '/%',
              `/${'a'.repeat(5000)}`,
              '/v1/completions',
            ),
          }),
        },
      ),
      caller: fc.oneof(
        {
          weight: 3,
          arbitrary: fc.constant({
            host: `127.0.0.1:${port}`,
            origin: undefined,
            auth: `Bearer ${KEY}`,
          }),
        },
        {
          weight: 2,
          arbitrary: fc.record({
            host: fc.constantFrom(
              `127.0.0.1:${port}`,
              `localhost:${port}`,
              `[::1]:${port}`,
              'evil.example:80',
              `127.0.0.1:${port + 1}`,
              '',
              undefined,
              `LOCALHOST:${port}`,
              `127.0.0.1:${port}\u0000`,
            ),
            origin: fc.constantFrom(
              undefined,
              `http://127.0.0.1:${port}`,
              'http://evil.example',
              'null',
              '',
            ),
            auth: fc.constantFrom(
              `Bearer ${KEY}`,
              undefined,
              'Bearer ',
              `Bearer ${KEY}x`,
              `bearer ${KEY}`,
              `Basic ${KEY}`,
              `Bearer ${KEY.slice(0, -1)}`,
            ),
          }),
        },
      ),
      body: fc.oneof(
        { weight: 2, arbitrary: fc.constantFrom(...VALID_TEXTS) },
        {
          weight: 4,
          arbitrary: mutatedJson(VALID, 3).map((v) => {
            try {
              return JSON.stringify(v) ?? '';
            } catch {
              return '[[';
            }
          }),
        },
        { weight: 2, arbitrary: mutatedText(VALID_TEXTS[0], 3) },
      ),
    })
    .map(({ route, caller, body }) => ({ ...route, ...caller, body }));

/** Statuses the server documents; anything else is a fault. */
const ANSWERED = new Set([200, 400, 401, 403, 404, 413]);

function send(port: number, r: Sent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (r.host !== undefined) headers['host'] = r.host;
    if (r.origin !== undefined) headers['origin'] = r.origin;
    if (r.auth !== undefined) headers['authorization'] = r.auth;
    let req;
    try {
      req = request(
        {
          host: '127.0.0.1',
          port,
          method: r.method,
          path: r.path,
          headers,
          setHost: false,
          timeout: 60_000,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', reject);
        },
      );
    } catch (err) {
      // Node itself refuses some header values (a NUL): nothing was sent.
      resolve({ status: -1, body: (err as Error).message });
      return;
    }
    req.on('timeout', () => req.destroy(new Error('no answer within 60 s')));
    req.on('error', reject);
    req.end(r.method === 'GET' || r.method === 'HEAD' ? undefined : r.body);
  });
}

let host: PolicyHostClient | undefined;
let server: OpenAICompatibleServer | undefined;
let port = 0;

/** The serve target (see the file's comment). */
export const serveTarget: FuzzTarget = {
  name: 'serve requests (HTTP on loopback, scripted model)',
  startsProcesses: true,
  share: 0.3,
  async setup() {
    ensurePolicyHostBundle();
    host = await PolicyHostClient.start({ modelDir: await scriptedModel(), device: 'cpu' });
    server = new OpenAICompatibleServer(host, 'scripted', { apiKey: KEY });
    port = Number(new URL(await server.listen(0)).port);
  },
  async teardown() {
    if (server && host) {
      // Still serving after everything it was sent.
      const after = await send(port, {
        method: 'POST',
        path: '/v1/chat/completions',
        host: `127.0.0.1:${port}`,
        origin: undefined,
        auth: `Bearer ${KEY}`,
        body: VALID_TEXTS[0],
      });
      assert.equal(after.status, 200, `the server stopped serving: ${after.body.slice(0, 300)}`);
    }
    await server?.close();
    host?.dispose();
    server = undefined;
    host = undefined;
  },
  property() {
    return fc.asyncProperty(sent(port), async (r) => {
      const { status, body } = await send(port, r).catch((err: Error) => {
        throw new Error(`${err.message} for ${JSON.stringify(r).slice(0, 600)}`);
      });
      if (status === -1) return;
      assert.ok(
        ANSWERED.has(status),
        `status ${status} for ${JSON.stringify(r).slice(0, 400)}: ${body.slice(0, 400)}`,
      );
      // Node's HTTP server answers an HTTP/1.1 request without Host itself: 400, no body.
      if (r.host === undefined) return assert.equal(status, 400);
      if (r.method === 'HEAD') return;
      const answer = JSON.parse(body) as {
        error?: { message?: unknown; type?: unknown };
        choices?: unknown[];
        data?: unknown[];
      };
      if (status === 200)
        assert.ok(Array.isArray(answer.choices) || Array.isArray(answer.data), body.slice(0, 300));
      else {
        assert.equal(typeof answer.error?.message, 'string', body.slice(0, 300));
        assert.equal(answer.error?.type, 'invalid_request_error');
        assert.doesNotMatch(String(answer.error?.message), /internal error|unexpected error/i);
      }
      // The caller checks come first: a request that fails them never reaches the model.
      const foreign =
        ![`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`].includes(
          r.host ?? '',
        ) ||
        (r.origin !== undefined && r.origin !== `http://127.0.0.1:${port}`);
      if (foreign) assert.equal(status, 403, `a foreign Host or Origin was answered ${status}`);
      else if (r.auth !== `Bearer ${KEY}`)
        assert.equal(status, 401, `a wrong key was answered ${status}`);
    });
  },
};
