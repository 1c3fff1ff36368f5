// `rehearse collect`, the live OTLP/HTTP receiver, as a user runs it: the CLI started, an agent
// instrumented with OpenTelemetry's Python SDK sending through the real OTLP/HTTP exporter
// (protobuf) with the two environment variables it prints, the trace written and read back; and the
// refusals: no token, a web page's Origin, a body over the limit, a content type not taken.
import * as assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import type { JsonObject } from '../../src/core/base/json';
import { encodeOtlpProtobuf } from '../../src/core/otlp/otlpProto';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import type { CallActualEvent, TraceEvent, TurnEvent } from '../../src/core/trace/format/schema';
import { FIXTURES, REPO } from '../support/servers';
import { trainerPython } from '../support/trainerPython';

/** A Python with opentelemetry-sdk and the OTLP/HTTP exporter: `$OTLP_TEST_PYTHON`, else the trainer's. */
function otelPython(): string {
  return process.env['OTLP_TEST_PYTHON'] || trainerPython();
}

interface Collector {
  child: ChildProcess;
  endpoint: string;
  headers: string;
  token: string;
  out: string[];
  err: string[];
  exited: Promise<number | null>;
}

let tmp: string;
let collector: Collector | undefined;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'otlp-collect-'));
});
afterEach(async () => {
  if (collector && collector.child.exitCode === null) {
    collector.child.kill('SIGINT');
    await collector.exited;
  }
  collector = undefined;
  await rm(tmp, { recursive: true, force: true });
});

/** Starts `rehearse collect --port 0` in the temporary folder; resolves once it printed its variables. */
async function startCollector(): Promise<Collector> {
  const child = spawn(
    process.execPath,
    [path.join(REPO, 'dist', 'cli.js'), 'collect', '--port', '0'],
    {
      cwd: tmp,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const out: string[] = [];
  const err: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const lines = (into: string[]) => {
    let rest = '';
    return (chunk: Buffer) => {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      into.push(...parts);
    };
  };
  child.stdout.on('data', lines(out));
  child.stderr.on('data', lines(err));
  await until(
    () => out.some((l) => l.includes('OTEL_EXPORTER_OTLP_HEADERS')),
    10_000,
    () => err,
  );
  const value = (name: string) =>
    out.find((l) => l.includes(`export ${name}=`))!.split(`export ${name}=`)[1];
  const headers = value('OTEL_EXPORTER_OTLP_HEADERS');
  collector = {
    child,
    endpoint: value('OTEL_EXPORTER_OTLP_ENDPOINT'),
    headers,
    token: decodeURIComponent(headers).replace(/^Authorization=Bearer /, ''),
    out,
    err,
    exited,
  };
  return collector;
}

async function until(done: () => boolean, ms: number, shown: () => string[]): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) assert.fail(`timed out; the collector said:\n${shown().join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The events of the one run the collector wrote. */
async function writtenRun(): Promise<TraceEvent[]> {
  const runs = path.join(tmp, '.rehearsal', 'runs');
  const names = await readdir(runs);
  assert.equal(names.length, 1, names.join(', '));
  return (await readTraceEvents(path.join(runs, names[0], 'trace.jsonl'))).events;
}

function post(c: Collector, route: string, body: Buffer | string, headers: Record<string, string>) {
  const bytes = typeof body === 'string' ? body : new Uint8Array(body);
  return fetch(`${c.endpoint}${route}`, { method: 'POST', body: bytes, headers });
}

/** The live agent's one run (test/fixtures/otlp/live-agent.py), as the studio reads it. */
function assertLiveAgentRun(events: TraceEvent[]): void {
  const run = events[0];
  assert.ok(run.type === 'run');
  assert.deepEqual(run.policy, { kind: 'recorded', id: 'live-agent' });
  const episode = events.find((e) => e.type === 'episode');
  assert.ok(episode?.type === 'episode');
  assert.equal(episode.instruction, 'What is the weather in Paris?');
  assert.equal(episode.system, 'You are a weather assistant.');
  assert.deepEqual(
    episode.tools?.map((t) => [t.name, t.description]),
    [['get_weather', 'The weather in a city.']],
  );
  const turns = events.filter((e): e is TurnEvent => e.type === 'turn');
  assert.deepEqual(
    turns.map((t) => t.parse),
    [
      {
        kind: 'calls',
        calls: [{ callId: 'call_L1veWeather', name: 'get_weather', arguments: { city: 'Paris' } }],
      },
      { kind: 'final', answer: 'It is 18 °C and cloudy in Paris.' },
    ],
  );
  const actuals = events.filter((e): e is CallActualEvent => e.type === 'call.actual');
  assert.deepEqual(
    actuals.map((a) => [a.callId, a.tool, a.response]),
    [['call_L1veWeather', 'get_weather', { text: ['18 °C, cloudy'], isError: false }]],
  );
}

describe('rehearse collect: a live OTLP/HTTP receiver', function () {
  this.timeout(60_000);

  it('takes an instrumented Python agent’s spans (the real OTLP exporter, protobuf) and writes its trace', async () => {
    const c = await startCollector();
    await promisify(execFile)(
      otelPython(),
      [path.join(FIXTURES, 'otlp', 'live-agent.py'), '--traces', '1'],
      {
        env: {
          ...process.env,
          OTEL_EXPORTER_OTLP_ENDPOINT: c.endpoint,
          OTEL_EXPORTER_OTLP_HEADERS: c.headers,
        },
      },
    );
    await until(
      () => c.out.some((l) => l.startsWith('trace ')),
      15_000,
      () => [...c.out, ...c.err],
    );
    assertLiveAgentRun(await writtenRun());
    // The progress line names the trace, its calls and the run written.
    assert.match(
      c.out.find((l) => l.startsWith('trace '))!,
      /^trace [0-9a-f]{32}: 1 call \(live-agent\) → \.rehearsal\/runs\/[^/]+\/trace\.jsonl$/,
    );
    const tasks = await readdir(path.join(tmp, '.rehearsal', 'imports', 'otlp-live', 'tasks'));
    assert.equal(tasks.length, 1);
    assert.equal(c.err.join('\n'), '');
  });

  it('imports an OTLP protobuf file the exporter’s own encoder wrote, as the receiver reads it', async () => {
    const pb = path.join(tmp, 'live-agent.pb');
    await promisify(execFile)(otelPython(), [
      path.join(FIXTURES, 'otlp', 'live-agent.py'),
      '--pb',
      pb,
    ]);
    const out = path.join(tmp, 'imported');
    await promisify(execFile)(process.execPath, [
      path.join(REPO, 'dist', 'cli.js'),
      'import',
      'otlp',
      pb,
      '--out',
      out,
    ]);
    const [run] = await readdir(path.join(out, 'runs'));
    assertLiveAgentRun((await readTraceEvents(path.join(out, 'runs', run, 'trace.jsonl'))).events);
  });

  it('refuses a request without the token, from a web page, over the size limit, or of another type', async () => {
    const c = await startCollector();
    const auth = { authorization: `Bearer ${c.token}` };
    const json = { 'content-type': 'application/json' };
    const noToken = await post(c, '/v1/traces', '{}', json);
    assert.equal(noToken.status, 401);
    assert.match(((await noToken.json()) as { message: string }).message, /token/);
    const wrongToken = await post(c, '/v1/traces', '{}', { ...json, authorization: 'Bearer x' });
    assert.equal(wrongToken.status, 401);
    const page = await post(c, '/v1/traces', '{}', {
      ...json,
      ...auth,
      origin: 'https://example.com',
    });
    assert.equal(page.status, 403);
    assert.equal(
      (await post(c, '/v1/traces', '{}', { ...json, ...auth, origin: 'null' })).status,
      403,
    );
    const big = await post(c, '/v1/traces', Buffer.alloc(16 * 2 ** 20 + 1, 0x20), {
      ...json,
      ...auth,
    });
    assert.equal(big.status, 413);
    // A gzip bomb: small on the wire, over the limit once inflated.
    const bomb = await post(c, '/v1/traces', gzipSync(Buffer.alloc(17 * 2 ** 20, 0x20)), {
      ...json,
      ...auth,
      'content-encoding': 'gzip',
    });
    assert.equal(bomb.status, 413);
    const text = await post(c, '/v1/traces', '{}', { ...auth, 'content-type': 'text/plain' });
    assert.equal(text.status, 415);
    const notOtlp = await post(c, '/v1/traces', Buffer.from('nonsense'), {
      ...auth,
      'content-type': 'application/x-protobuf',
    });
    assert.equal(notOtlp.status, 400);
    assert.equal((await post(c, '/v1/metrics', '{}', { ...json, ...auth })).status, 404);
    const ok = await post(c, '/v1/traces', '{}', { ...json, ...auth });
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), '{}');
  });

  it('takes gzip protobuf and JSON, and writes what is pending on Ctrl+C', async () => {
    const c = await startCollector();
    const auth = { authorization: `Bearer ${c.token}` };
    const spans = JSON.parse(
      await readFile(path.join(FIXTURES, 'otlp', 'openai-v2-events.json'), 'utf8'),
    ) as JsonObject;
    const logs = await readFile(path.join(FIXTURES, 'otlp', 'openai-v2-events.logs.json'));
    // The log records first: the spans' root ends the trace.
    const r2 = await post(c, '/v1/logs', logs, { ...auth, 'content-type': 'application/json' });
    assert.equal(r2.status, 200);
    const r1 = await post(c, '/v1/traces', gzipSync(encodeOtlpProtobuf(spans, 'traces')), {
      ...auth,
      'content-type': 'application/x-protobuf',
      'content-encoding': 'gzip',
    });
    assert.equal(r1.status, 200);
    assert.equal(r1.headers.get('content-type'), 'application/x-protobuf');
    assert.equal((await r1.arrayBuffer()).byteLength, 0);
    // Stopped before the trace is due: it is written all the same, spans and log records together.
    c.child.kill('SIGINT');
    assert.equal(await c.exited, 0);
    const events = await writtenRun();
    const actuals = events.filter((e): e is CallActualEvent => e.type === 'call.actual');
    assert.deepEqual(
      actuals.map((a) => [a.callId, a.tool]),
      [
        ['call_W3ath3rPar1s', 'get_weather'],
        ['call_B00kChezLu', 'book_table'],
      ],
    );
    assert.equal(c.out.at(-1), 'stopped; every trace received is written');
  });
});
