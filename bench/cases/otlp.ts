import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/program';
import type { JsonObject } from '../../src/core/base/json';
import { encodeOtlpProtobuf } from '../../src/core/otlp/otlpProto';
import { delayMs } from '../../src/core/base/timers';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import { REPO } from '../../test/support/servers';
import { benchSize, measure, registerBenchCase, timingStats } from '../registry';

/** Calls of the generated OTLP file: traces of CALLS_PER_TRACE calls each. */
const CALLS = benchSize(10_000, 200);
const CALLS_PER_TRACE = 10;
/** The receiver's load: traces per second, from this many concurrent senders, for this long. */
const RATE = 50;
const SENDERS = 8;
const SECONDS = benchSize(10, 2);

const hex = (n: number, digits: number) => n.toString(16).padStart(digits, '0');
const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });

/**
 * One agent run as an ExportTraceServiceRequest in the current GenAI conventions: an `invoke_agent`
 * root, a `chat` span holding the whole conversation (`calls` lookups, then the answer), and an
 * `execute_tool` span per call; ids from `n`.
 */
function agentTrace(n: number, calls: number): JsonObject {
  const traceId = hex(n + 1, 32);
  const root = hex(n * 1000 + 1, 16);
  const t0 = 1_700_000_000_000_000_000n + BigInt(n) * 1_000_000_000n;
  const span = (k: number, name: string, parent: string | undefined, attributes: object[]) => ({
    traceId,
    spanId: hex(n * 1000 + k, 16),
    ...(parent ? { parentSpanId: parent } : {}),
    name,
    kind: 1,
    startTimeUnixNano: String(t0 + BigInt(k) * 1000n),
    endTimeUnixNano: String(t0 + BigInt(k) * 1000n + 500n),
    attributes,
    status: {},
  });
  const input: object[] = [
    { role: 'user', parts: [{ type: 'text', content: `Look up orders ${n} (${calls} of them).` }] },
  ];
  const tools: object[] = [];
  for (let c = 0; c < calls; c++) {
    const id = `call_${n}x${c}`;
    const order = `#W${1_000_000 + n * calls + c}`;
    input.push(
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id, name: 'get_order', arguments: { order_id: order } }],
      },
      {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id, response: `{"order":"${order}","ok":true}` }],
      },
    );
    tools.push(
      span(3 + c, 'execute_tool get_order', root, [
        attr('gen_ai.operation.name', 'execute_tool'),
        attr('gen_ai.tool.name', 'get_order'),
        attr('gen_ai.tool.call.id', id),
        attr('gen_ai.tool.call.arguments', JSON.stringify({ order_id: order })),
        attr('gen_ai.tool.call.result', `{"order":"${order}","ok":true}`),
      ]),
    );
  }
  const output = [
    { role: 'assistant', parts: [{ type: 'text', content: 'All found.' }], finish_reason: 'stop' },
  ];
  const spans = [
    span(1, 'invoke_agent bench', undefined, [attr('gen_ai.operation.name', 'invoke_agent')]),
    span(2, 'chat bench', root, [
      attr('gen_ai.operation.name', 'chat'),
      attr('gen_ai.input.messages', JSON.stringify(input)),
      attr('gen_ai.output.messages', JSON.stringify(output)),
    ]),
    ...tools,
  ];
  return JSON.parse(
    JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [attr('service.name', 'otlp-bench')] },
          scopeSpans: [{ scope: { name: 'bench' }, spans }],
        },
      ],
    }),
  ) as JsonObject;
}

async function quietCli(args: string[]): Promise<number> {
  return runCli(args, { out: () => undefined, err: () => undefined, color: false });
}

registerBenchCase({
  name: `otlp import: ${CALLS.toLocaleString('en')} calls`,
  description: `\`rehearse import otlp\` (in-process, writing runs/, tasks/ and recordings/) of a generated OTLP file of ${CALLS / CALLS_PER_TRACE} agent traces of ${CALLS_PER_TRACE} calls each (current GenAI conventions: a chat span holding the conversation, an execute_tool span per call), as OTLP JSON (one request per line) and as OTLP protobuf files; the baseline is reading and JSON-parsing the JSON file alone.`,
  targets: [
    { measurement: 'import OTLP JSON', stat: 'medianMs', belowMs: 5000 },
    { measurement: 'import OTLP protobuf', stat: 'medianMs', belowMs: 5000 },
  ],
  async run(settings) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-bench-otlp-'));
    try {
      const requests = Array.from({ length: CALLS / CALLS_PER_TRACE }, (_, n) =>
        agentTrace(n, CALLS_PER_TRACE),
      );
      const json = path.join(dir, 'traces.json');
      await fs.writeFile(json, requests.map((r) => JSON.stringify(r)).join('\n') + '\n');
      // A protobuf file holds one request: the traces in 8 files, as an exporter's batches.
      const pbFiles: string[] = [];
      const per = Math.ceil(requests.length / 8);
      for (let i = 0; i < requests.length; i += per) {
        const batch = requests.slice(i, i + per);
        const merged = { resourceSpans: batch.flatMap((r) => r['resourceSpans'] as JsonObject[]) };
        const file = path.join(dir, `traces-${i}.pb`);
        await fs.writeFile(file, encodeOtlpProtobuf(merged, 'traces'));
        pbFiles.push(file);
      }
      let k = 0;
      const importOnce = async (files: string[]) => {
        const out = path.join(dir, `out-${k++}`);
        const code = await quietCli(['import', 'otlp', ...files, '--out', out]);
        if (code !== 0) throw new Error(`import otlp exited ${code}`);
        await fs.rm(out, { recursive: true, force: true });
      };
      const few = { warmup: Math.min(1, settings.warmup), runs: Math.min(5, settings.runs) };
      const parse = await measure(
        async () => (await fs.readFile(json, 'utf8')).split('\n').map((l) => l && JSON.parse(l)),
        few,
      );
      const fromJson = await measure(() => importOnce([json]), few);
      const fromPb = await measure(() => importOnce(pbFiles), few);
      // What one import wrote, counted once.
      const out = path.join(dir, 'counted');
      await quietCli(['import', 'otlp', json, '--out', out]);
      const runs = await fs.readdir(path.join(out, 'runs'));
      const events = (await readTraceEvents(path.join(out, 'runs', runs[0], 'trace.jsonl'))).events;
      return {
        measurements: {
          'read + JSON.parse the file': parse,
          'import OTLP JSON': fromJson,
          'import OTLP protobuf': fromPb,
        },
        baseline: 'read + JSON.parse the file',
        facts: {
          traces: requests.length,
          'calls imported': events.filter((e) => e.type === 'call.actual').length,
          'JSON MB': +((await fs.stat(json)).size / 2 ** 20).toFixed(1),
        },
      };
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
});

/** `rehearse collect` started in `cwd`; its endpoint and token once it printed them. */
async function startCollector(cwd: string) {
  const child = spawn(
    process.execPath,
    [path.join(REPO, 'dist', 'cli.js'), 'collect', '--port', '0'],
    { cwd, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let text = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('OTEL_EXPORTER_OTLP_HEADERS=')) resolve();
    });
    void exited.then(() => reject(new Error(`rehearse collect exited: ${text}`)));
  });
  const endpoint = /OTEL_EXPORTER_OTLP_ENDPOINT=(\S+)/.exec(text)![1];
  const token = decodeURIComponent(/OTEL_EXPORTER_OTLP_HEADERS=(\S+)/.exec(text)![1]).replace(
    /^Authorization=Bearer /,
    '',
  );
  return { child, exited, endpoint, token };
}

registerBenchCase({
  name: `otlp collect: ${RATE} traces/s from ${SENDERS} senders for ${SECONDS} s`,
  description: `\`rehearse collect\` (its own process) fed by ${SENDERS} concurrent senders, together ${RATE} agent traces a second for ${SECONDS} s, each trace of 3 calls sent as OTLP protobuf, its tool spans in one request and its chat and root spans in another, as a batching exporter sends them; then Ctrl+C. Counted: the traces sent and the episodes the written runs hold (none may be lost), the rate held, and each request's latency.`,
  targets: [
    { fact: 'traces lost', atMost: 0 },
    { fact: 'traces/s taken', atLeast: RATE * 0.95 },
  ],
  async run() {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-bench-collect-'));
    try {
      const c = await startCollector(dir);
      const total = RATE * SECONDS;
      const latencies: number[] = [];
      let failed = 0;
      const send = async (body: Uint8Array) => {
        const t0 = performance.now();
        const r = await fetch(`${c.endpoint}/v1/traces`, {
          method: 'POST',
          body: new Uint8Array(body),
          headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/x-protobuf' },
        });
        await r.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (r.status !== 200) failed++;
      };
      const start = performance.now();
      // Sender s sends traces s, s + SENDERS, ...; trace n is due at n / RATE seconds.
      await Promise.all(
        Array.from({ length: SENDERS }, async (_, s) => {
          for (let n = s; n < total; n += SENDERS) {
            const wait = start + (n * 1000) / RATE - performance.now();
            if (wait > 0) await delayMs(wait);
            const request = agentTrace(n, 3);
            const spans = (
              request['resourceSpans'] as { scopeSpans: { spans: JsonObject[] }[] }[]
            )[0].scopeSpans[0].spans;
            const part = (from: number, to: number) => {
              const copy = structuredClone(request) as typeof request;
              (
                copy['resourceSpans'] as { scopeSpans: { spans: JsonObject[] }[] }[]
              )[0].scopeSpans[0].spans = spans.slice(from, to);
              return encodeOtlpProtobuf(copy, 'traces');
            };
            await send(part(2, spans.length));
            await send(part(0, 2));
          }
        }),
      );
      const seconds = (performance.now() - start) / 1000;
      c.child.kill('SIGINT');
      await c.exited;
      let written = 0;
      const runsDir = path.join(dir, '.rehearsal', 'runs');
      for (const run of await fs.readdir(runsDir).catch(() => [] as string[]))
        written += (await readTraceEvents(path.join(runsDir, run, 'trace.jsonl'))).events.filter(
          (e) => e.type === 'episode',
        ).length;
      return {
        measurements: { 'request (protobuf, 200)': timingStats(latencies) },
        facts: {
          'traces sent': total,
          'requests refused or failed': failed,
          'traces written': written,
          'traces lost': total - written,
          'traces/s taken': +(total / seconds).toFixed(1),
        },
      };
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
});
