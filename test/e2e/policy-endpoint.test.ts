// The endpoint policy (the official `openai` client) against a real OpenAI-compatible server: the
// studio's own `rehearse serve` (OpenAICompatibleServer over the policy host with the scripted test
// model). Tool calls travel as structured `tool_calls` and come back as the same protocol text, so a
// run through the endpoint records exactly what a run with the local policy records.
import * as assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { freePort } from '../../src/core/base/freePort';
import type { StudioError } from '../../src/core/base/errors';
import { EndpointPolicy } from '../../src/core/policy/endpointPolicy';
import { PolicyHostClient } from '../../src/core/policy/hostClient';
import { OpenAICompatibleServer } from '../../src/core/policy/openaiServer';
import { buildRehearsePrompt } from '../../src/core/protocol/rehearsePrompt';
import { runCli } from '../../src/cli/program';
import {
  OK_CASE,
  REFUSED_CASE,
  caseMessage,
  probeCall,
  probeTask,
  scriptedModel,
} from '../support/scriptedModel';
import { ensurePolicyHostBundle } from '../support/servers';
import { rehearse as cli } from '../support/cli';
import { rejects } from '../support/errors';
import { useRuns, useScriptedPolicy } from '../support/runnerFixture';

const PROBE_TOOL = {
  type: 'function',
  function: {
    name: 'probe',
    description: 'Probe one case',
    parameters: { type: 'object', properties: { case: { type: 'string' } }, required: ['case'] },
  },
};

describe("endpoint policy against the studio's own OpenAI-compatible server", function () {
  this.timeout(120_000);
  const local = useScriptedPolicy();
  const { run } = useRuns();
  let host: PolicyHostClient;
  let server: OpenAICompatibleServer;
  let baseURL = '';
  const post = (body: unknown) =>
    fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  before(async function () {
    this.timeout(600_000);
    ensurePolicyHostBundle();
    host = await PolicyHostClient.start({ modelDir: await scriptedModel(), device: 'cpu' });
    server = new OpenAICompatibleServer(host, 'scripted');
    baseURL = await server.listen(0);
  });
  after(async () => {
    await server?.close();
    host?.dispose();
  });

  it('answers an act request with tools as structured tool_calls (finish_reason "tool_calls"), like a Hermes-style vLLM parser', async () => {
    const response = await post({
      model: 'scripted',
      messages: [{ role: 'user', content: caseMessage('ok') }],
      tools: [PROBE_TOOL],
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as {
      choices: {
        finish_reason: string;
        message: {
          content: string | null;
          tool_calls: { type: string; function: { name: string; arguments: string } }[];
        };
      }[];
      usage: { prompt_tokens: number };
    };
    assert.equal(body.choices[0].finish_reason, 'tool_calls');
    assert.equal(body.choices[0].message.content, null);
    assert.deepEqual(
      body.choices[0].message.tool_calls.map((c) => [
        c.type,
        c.function.name,
        JSON.parse(c.function.arguments),
      ]),
      [['function', 'probe', { case: 'ok' }]],
    );
    assert.ok(body.usage.prompt_tokens > 100);
  });

  it('round-trips tool calls through the openai client: the endpoint policy sees the same protocol text as the local policy', async () => {
    const policy = new EndpointPolicy({ baseURL, model: 'scripted' });
    const tools = [
      { name: 'probe', description: 'Probe one case', parameters: PROBE_TOOL.function.parameters },
    ];
    const act = await policy.act({
      messages: [{ role: 'user', content: caseMessage('ok') }],
      tools,
    });
    assert.equal(act.text, probeCall('ok'));
    assert.equal(act.parse.kind, 'calls');
    assert.deepEqual(policy.info, { kind: 'endpoint', id: `${baseURL} scripted` });
  });

  it('rehearses n samples in one request', async () => {
    const policy = new EndpointPolicy({ baseURL, model: 'scripted' });
    const recorded = await run(local(), [probeTask(OK_CASE.case)]);
    assert.equal(recorded.trace.rehearsals[0].text, OK_CASE.text);
    // The rehearse prompt of that call, as the runner built it, sent through the endpoint with n = 3.
    const messages = buildRehearsePrompt({
      tools: recorded.trace.episodes[0].tools!,
      history: [{ role: 'user', content: caseMessage('ok') }],
      latestText: probeCall('ok'),
      call: { name: 'probe', arguments: { case: 'ok' } },
    });
    const result = await policy.rehearse({ messages, n: 3 });
    assert.deepEqual(
      result.samples.map((s) => s.text),
      [OK_CASE.text, OK_CASE.text, OK_CASE.text],
    );
    assert.ok(result.samples.every((s) => s.parse.ok));
  });

  it('a run through the endpoint records the same turns, rehearsals and grades as a run with the local policy', async () => {
    const tasks = [probeTask(OK_CASE.case), probeTask(REFUSED_CASE.case)];
    const viaEndpoint = await run(new EndpointPolicy({ baseURL, model: 'scripted' }), tasks);
    const viaHost = await run(local(), tasks);
    assert.equal(viaEndpoint.trace.run.policy.kind, 'endpoint');
    const texts = (t: typeof viaHost.trace) =>
      t.events.flatMap((e) => (e.type === 'turn' || e.type === 'call.rehearsal' ? [e.text] : []));
    assert.deepEqual(texts(viaEndpoint.trace), texts(viaHost.trace));
    assert.deepEqual(
      viaEndpoint.trace.ends.map((e) => [e.status, e.reward]),
      viaHost.trace.ends.map((e) => [e.status, e.reward]),
    );
  });

  it('an unreachable server is ENDPOINT_UNREACHABLE; a URL that is not one is INVALID_ENDPOINT', async () => {
    const port = await freePort();
    const policy = new EndpointPolicy({
      baseURL: `http://127.0.0.1:${port}/v1`,
      model: 'x',
      timeoutMs: 5000,
    });
    const err = await rejects(
      policy.act({ messages: [{ role: 'user', content: 'hi' }], tools: [] }),
    );
    assert.equal(err.code, 'ENDPOINT_UNREACHABLE');
    assert.match(
      err.message,
      new RegExp(`Cannot reach http://127\\.0\\.0\\.1:${port}/v1: .*Is the server running\\?`),
    );
    assert.throws(
      () => new EndpointPolicy({ baseURL: 'localhost 8000', model: 'x' }),
      (e: StudioError) => e.code === 'INVALID_ENDPOINT' && /is not a URL/.test(e.message),
    );
    // A run with it stops at the first episode with that code, rather than failing every task in turn.
    const { summary, trace } = await run(policy, [
      probeTask(OK_CASE.case),
      probeTask(REFUSED_CASE.case),
    ]);
    assert.deepEqual(
      [summary.status, summary.error?.code, summary.episodes.length],
      ['failed', 'ENDPOINT_UNREACHABLE', 1],
    );
    assert.deepEqual(
      [trace.end.status, trace.ends[0].error?.code],
      ['failed', 'ENDPOINT_UNREACHABLE'],
    );
  });

  it('requests the server cannot serve are answered 400 with a message, and reach the endpoint policy as ENDPOINT_ERROR', async () => {
    const cases: [unknown, RegExp][] = [
      [{ messages: [] }, /"messages" must be a non-empty array/],
      [{ messages: [{ role: 'robot', content: 'x' }] }, /messages\[0\]\.role must be/],
      [
        { messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'probe' }] },
        /tools\[0\] must be/,
      ],
      [
        { messages: [{ role: 'user', content: 'x' }], stream: true },
        /Streaming responses are not supported/,
      ],
      [
        { messages: [{ role: 'user', content: 'x' }], max_tokens: -3 },
        /"max_tokens" must be a whole number from 1 to 10,000,000, not -3/,
      ],
      [
        { messages: [{ role: 'user', content: 'x' }], n: 99 },
        /"n" must be a whole number from 1 to 16, not 99/,
      ],
      [
        { messages: [{ role: 'user', content: 'x' }], max_tokens: 100_000 },
        /exceeds the model's 4096 positions/,
      ],
      [
        { messages: [{ role: 'user', content: 'x' }], temperature: -1 },
        /"temperature" must be a number from 0 to 2, not -1/,
      ],
      [
        { messages: [{ role: 'user', content: 'x' }], top_p: 0 },
        /"top_p" must be a number above 0 to 1, not 0/,
      ],
      [
        { messages: [{ role: 'user', content: 'x' }], seed: -7.5 },
        /"seed" must be a whole number from 0 to 4,294,967,295, not -7.5/,
      ],
      [
        { messages: [{ role: 'user', content: 'x' }], temperature: '0.7' },
        /"temperature" must be a number/,
      ],
    ];
    for (const [body, message] of cases) {
      const response = await post(body);
      const answer = (await response.json()) as { error: { message: string; type: string } };
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(answer.error.type, 'invalid_request_error');
      assert.match(answer.error.message, message);
    }
    const invalidJson = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      body: '{"messages": [',
    });
    assert.equal(invalidJson.status, 400);
    assert.equal(
      (await fetch(`${baseURL}/completions`, { method: 'POST', body: '{}' })).status,
      404,
    );
    const policy = new EndpointPolicy({ baseURL, model: 'scripted' });
    const err = await rejects(
      policy.act({ messages: [{ role: 'user', content: 'x' }], tools: [], maxTokens: 100_000 }),
    );
    assert.equal(err.code, 'ENDPOINT_ERROR');
    assert.match(err.message, /answered 400: .*exceeds the model's 4096 positions/);
  });

  it('64 clients at once while one uploads a 16 MiB body: the body is refused 413, the 64 are answered meanwhile, memory stays bounded, and it serves after', async function () {
    this.timeout(300_000);
    const { port } = new URL(baseURL);
    const answer = (res: IncomingMessage) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
    const small = () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/v1/chat/completions',
            headers: { 'content-type': 'application/json' },
            agent: false,
          },
          (res) => answer(res).then(resolve, reject),
        );
        req.on('error', reject);
        req.end(
          JSON.stringify({
            model: 'scripted',
            messages: [{ role: 'user', content: caseMessage('ok') }],
            tools: [PROBE_TOOL],
          }),
        );
      });
    // The big one: a chat request whose message is 16 MiB, sent 256 KiB at a time from one reused
    // buffer (so the test itself holds no 16 MiB), declared in Content-Length as clients do.
    const CHUNK = Buffer.alloc(256 * 1024, 'x');
    const head = Buffer.from('{"model":"scripted","messages":[{"role":"user","content":"');
    const tail = Buffer.from('"}]}');
    const chunks = (16 * 1024 * 1024) / CHUNK.length;
    const length = head.length + chunks * CHUNK.length + tail.length;
    const rssBefore = process.memoryUsage().rss;
    let bigAnswered: { status: number; body: string } | undefined;
    let uploadStopped = false;
    const big = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', 'content-length': String(length) },
      agent: false,
    });
    const bigDone = new Promise<{ status: number; body: string }>((resolve, reject) => {
      big.on('response', (res) =>
        answer(res).then((a) => {
          bigAnswered = a;
          resolve(a);
        }, reject),
      );
      // A server that refuses early may close before the upload ends; the answer is what counts.
      big.on('error', (err) => {
        uploadStopped = true;
        if (!bigAnswered) reject(err);
      });
    });
    const write = async (buffer: Buffer) => {
      if (uploadStopped || bigAnswered) return;
      if (!big.write(buffer))
        await new Promise<void>((resolve) => {
          const done = () => {
            big.off('drain', done);
            big.off('close', done);
            resolve();
          };
          big.on('drain', done);
          big.on('close', done);
        });
    };
    await write(head);
    for (let i = 0; i < chunks / 2; i++) await write(CHUNK);
    // Half the body is in: 64 clients ask at once, and all must be answered while it is still open.
    const others = await Promise.all(Array.from({ length: 64 }, small));
    const peakRss = process.memoryUsage().rss;
    for (let i = chunks / 2; i < chunks; i++) await write(CHUNK);
    await write(tail);
    if (!uploadStopped) big.end();
    const refused = await bigDone;
    assert.deepEqual(
      others.map((o) => o.status),
      Array(64).fill(200),
      `every one of the 64 answered: ${others.find((o) => o.status !== 200)?.body}`,
    );
    for (const o of others)
      assert.equal(
        (JSON.parse(o.body) as { choices: { finish_reason: string }[] }).choices[0].finish_reason,
        'tool_calls',
      );
    assert.equal(refused.status, 413, refused.body);
    assert.match(
      (JSON.parse(refused.body) as { error: { message: string } }).error.message,
      /too large/,
    );
    // Bounded: the server never held the body past its 16 MiB limit (the test's own share is the
    // 64 small requests and a 256 KiB chunk).
    const grownMb = (Math.max(peakRss, process.memoryUsage().rss) - rssBefore) / 2 ** 20;
    assert.ok(grownMb < 160, `resident memory grew ${grownMb.toFixed(0)} MiB`);
    // And it serves after.
    assert.equal((await small()).status, 200);
  });

  it('`rehearse serve` serves a model folder until interrupted; bad arguments are one line, exit 2', async () => {
    const port = await freePort();
    const out: string[] = [];
    const sigintListeners = process.listenerCount('SIGINT');
    const serving = runCli(
      ['serve', '--policy', await scriptedModel(), '--port', String(port), '--device', 'cpu'],
      { out: (s) => out.push(s), err: () => undefined, color: false },
    );
    for (let i = 0; i < 200 && out.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.match(
      out[0] ?? '',
      new RegExp(`at http://127\\.0\\.0\\.1:${port}/v1 \\(model "scripted-[0-9a-f]+"\\)`),
    );
    const apiKey = /API key for this launch .*: (rs-[\w-]{32})$/.exec(out[1] ?? '')?.[1];
    assert.ok(apiKey, `a key printed once at start: ${out[1]}`);
    const url = `http://127.0.0.1:${port}/v1/models`;
    assert.equal((await fetch(url)).status, 401, 'no key');
    assert.equal(
      (await fetch(url, { headers: { authorization: 'Bearer wrong-key-of-some-length' } })).status,
      401,
      'a wrong key',
    );
    const authorization = `Bearer ${apiKey}`;
    // DNS rebinding: a page whose name now resolves to 127.0.0.1 sends its own Host and Origin.
    const raw = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        request(
          { host: '127.0.0.1', port, path: '/v1/models', headers: { authorization, ...headers } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        )
          .on('error', reject)
          .end();
      });
    assert.equal(await raw({ host: `attacker.example:${port}` }), 403, 'a foreign Host');
    assert.equal(
      await raw({ host: `127.0.0.1:${port}`, origin: 'http://attacker.example' }),
      403,
      'a foreign Origin',
    );
    assert.equal(await raw({ host: `localhost:${port}` }), 200, 'localhost is this machine');
    const models = (await (await fetch(url, { headers: { authorization } })).json()) as {
      data: { id: string }[];
    };
    assert.equal(models.data.length, 1);
    const act = await new EndpointPolicy({
      baseURL: `http://127.0.0.1:${port}/v1`,
      model: models.data[0].id,
      apiKey,
    }).act({
      messages: [{ role: 'user', content: caseMessage('ok') }],
      tools: [
        {
          name: 'probe',
          description: 'Probe one case',
          parameters: PROBE_TOOL.function.parameters,
        },
      ],
    });
    assert.equal(act.text, probeCall('ok'));
    process.emit('SIGINT');
    assert.equal(await serving, 0);
    assert.equal(
      process.listenerCount('SIGINT'),
      sigintListeners,
      'serve removed its signal handlers',
    );

    const bad = await cli('serve', '--policy', await scriptedModel(), '--port', 'eighty');
    assert.deepEqual([bad.code, bad.errLines.length], [2, 1]);
    assert.match(
      bad.errLines[0],
      /^rehearse: --port must be a whole number from 0 to 65,535 \(0 picks a free one\), not "eighty"/,
    );
  });

  it('`rehearse serve` on a port in use: one line that says what to do, exit 1, and its policy host ends with it', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
    const port = (busy.address() as AddressInfo).port;
    try {
      const r = await cli(
        'serve',
        '--policy',
        await scriptedModel(),
        '--port',
        String(port),
        '--device',
        'cpu',
      );
      assert.equal(r.code, 1, r.errLines.join('\n'));
      // Its stderr is the policy host's start line, then the error.
      assert.deepEqual(r.errLines.filter((l) => l.startsWith('rehearse: ')).length, 1);
      assert.equal(
        r.errLines.at(-1),
        `rehearse: Port ${port} on 127.0.0.1 is in use by another program; pass another --port, or --port 0 for a free one.`,
      );
    } finally {
      busy.close();
    }
  });
});
