import { createWriteStream, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { JsonObject } from '../../src/core/base/json';
import { serializeTraceEvent } from '../../src/core/trace/format/writer';
import { SAMPLE_TOOLS } from '../../test/builders/samples';
import { TraceBuilder } from '../../test/builders/traceBuilder';
import { perturb, retailDocument } from './retail';

const call = (name: string, args: object) =>
  `\n<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

/**
 * One realistic shadow-mode episode as trace lines (through the real act and rehearsal parsers and
 * fidelity scoring): a lookup, a user record of a few kilobytes rehearsed with small mistakes, an
 * order, and a final answer. `EPISODE` and `#W0000001` are placeholders the writer numbers.
 */
function episodeTemplate(): string[] {
  const t = new TraceBuilder('template', 'shadow');
  const user = (retailDocument(2500, 11).users as JsonObject[])[0];
  const order = (user.orders as JsonObject[])[0];
  const e = t.episode('retail-bench-EPISODE', {
    instruction: 'Where is my order #W0000001? My email is mia.garcia@example.com.',
    tools: SAMPLE_TOOLS,
  });
  e.turn(
    call('find_user_id_by_email', { email: 'mia.garcia@example.com' }),
    'Where is my order #W0000001? My email is mia.garcia@example.com.',
  )
    .rehearse(0, { user_id: user.user_id })
    .actual(0, { json: { user_id: user.user_id } });
  e.turn(call('get_user_details', { user_id: user.user_id }))
    .rehearse(0, perturb({ users: [user] }, 0.5, 3))
    .actual(0, { json: { users: [user] } });
  e.turn(call('get_order_details', { order_id: '#W0000001' }))
    .rehearse(0, { ...order, order_id: '#W0000001', status: 'pending' })
    .actual(0, { json: { ...order, order_id: '#W0000001' } });
  e.turn('Your order #W0000001 is on its way.');
  e.end({ reward: 1, success: true, answer: 'Your order #W0000001 is on its way.' });
  // Drop the template's own run event: the writer writes one run event for the whole file.
  return t.events.slice(1).map((ev) => serializeTraceEvent(ev));
}

/**
 * A compact shadow-mode episode: turns of two small order lookups each (rehearsed right, or with
 * the status wrong) and a final answer; about 1.3 KB of trace per call, so that a million calls make
 * a trace of about a gigabyte. `calls` is rounded up to an even number.
 */
export function compactEpisodeTemplate(calls = 10): string[] {
  const t = new TraceBuilder('template', 'shadow');
  const e = t.episode('retail-bench-EPISODE', { instruction: 'Where are my orders?' });
  for (let i = 0; i < calls; i += 2) {
    const order = (k: number) => ({ order_id: `#W000000${k}`, status: 'delivered' });
    const turn = e.turn(
      `${call('get_order_details', { order_id: order(i).order_id })}${call('get_order_details', { order_id: order(i + 1).order_id })}`,
      i === 0 ? 'Where are my orders?' : undefined,
    );
    for (const k of [0, 1])
      turn
        .rehearse(k, (i + k) % 3 === 0 ? { ...order(i + k), status: 'pending' } : order(i + k))
        .actual(k, { json: order(i + k) });
  }
  e.turn('Your orders are on their way.');
  e.end({ reward: 1, success: true, answer: 'Your orders are on their way.' });
  return t.events.slice(1).map((ev) => serializeTraceEvent(ev));
}

/** Numbers a template line for episode `n` (1-based): ids `e<n>...`, task id, index, order id. */
function numbered(line: string, n: number): string {
  return line
    .replace(/"(episodeId|turnId|callId)":"e1(?=[."])/g, `"$1":"e${n}`)
    .replace('"index":0,"taskId"', `"index":${n - 1},"taskId"`)
    .replace(/EPISODE/g, String(n))
    .replace(/#W0000001/g, `#W${String(n).padStart(7, '0')}`);
}

/**
 * Writes a shadow-mode trace of about `bytes` bytes (whole episodes of `template`, then run.end),
 * with raw appends of lines in the trace format, far faster than the durable writer. Returns the
 * number of episodes.
 */
export async function writeLargeTrace(
  file: string,
  runId: string,
  bytes: number,
  template: readonly string[] = episodeTemplate(),
): Promise<number> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const out = createWriteStream(file);
  // One error listener for the whole file (a listener per write would pile up), which also fails a
  // write that waits for 'drain'.
  let failed: Error | undefined;
  let waiting: ((err: Error) => void) | undefined;
  out.on('error', (err) => {
    failed = err;
    waiting?.(err);
  });
  const write = (chunk: string) =>
    new Promise<void>((resolve, reject) => {
      if (failed) return reject(failed);
      if (out.write(chunk)) return resolve();
      waiting = reject;
      out.once('drain', () => {
        waiting = undefined;
        resolve();
      });
    });
  const head = new TraceBuilder(runId, 'shadow');
  await write(serializeTraceEvent(head.events[0]) + '\n');
  let written = 0;
  let n = 0;
  let batch: string[] = [];
  let batchBytes = 0;
  while (written + batchBytes < bytes) {
    n++;
    for (const line of template) {
      const text = numbered(line, n) + '\n';
      batch.push(text);
      batchBytes += text.length;
    }
    if (batchBytes > 8 * 1024 * 1024) {
      await write(batch.join(''));
      written += batchBytes;
      batch = [];
      batchBytes = 0;
    }
  }
  batch.push(serializeTraceEvent(head.end().events[1]) + '\n');
  await write(batch.join(''));
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
  return n;
}

/** A workspace made for one bench run; {@link LargeTraceWorkspace.dispose} deletes it. */
export interface LargeTraceWorkspace {
  workspace: string;
  file: string;
  episodes: number;
  /** Seconds it took to write the trace. */
  writeSeconds: number;
  dispose(): Promise<void>;
}

/**
 * A workspace in a new temporary folder holding one large trace of about `megabytes` MB under
 * `.rehearsal/runs/`. The caller deletes it ({@link LargeTraceWorkspace.dispose}) when done: a
 * gigabyte is not left behind.
 */
export async function largeTraceWorkspace(
  megabytes: number,
  template?: readonly string[],
): Promise<LargeTraceWorkspace> {
  const workspace = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-bench-large-trace-'));
  const dispose = () => fs.rm(workspace, { recursive: true, force: true });
  try {
    const file = path.join(
      workspace,
      '.rehearsal',
      'runs',
      '20261129-200000-shadow-large',
      'trace.jsonl',
    );
    const t0 = performance.now();
    const episodes = await writeLargeTrace(
      file,
      '20261129-200000-shadow-large',
      megabytes * 1024 * 1024,
      template,
    );
    return { workspace, file, episodes, writeSeconds: (performance.now() - t0) / 1000, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}
