import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../src/core/base/errors';
import { readTrace, readTraceEvents } from '../../src/core/trace/format/reader';
import type { NewTraceEvent } from '../../src/core/trace/format/schema';
import { TraceWriter } from '../../src/core/trace/format/writer';
import { useTempDir } from '../support/tempDir';

const run = (runId = 'r1'): NewTraceEvent => ({
  type: 'run',
  runId,
  mode: 'shadow',
  policy: { kind: 'reference', id: 'reference' },
});
const episode = (index: number): NewTraceEvent => ({
  type: 'episode',
  episodeId: `e${index + 1}`,
  index,
  taskId: 'retail-0001',
  mode: 'shadow',
});

async function lines(file: string): Promise<string[]> {
  return (await fs.readFile(file, 'utf8')).split('\n');
}

async function rejectsWith(p: Promise<unknown>, code: string): Promise<StudioError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof StudioError, `expected a StudioError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected a ${code} rejection`);
}

describe('TraceWriter', () => {
  const tmp = useTempDir();

  it('appends events in order, one JSON object per line, adding v and ts', async () => {
    const file = path.join(tmp(), 'runs', 'r1', 'trace.jsonl'); // folders are created
    const writer = await TraceWriter.open(file, { durable: false });
    await writer.append(run());
    await writer.append({ ...episode(0), ts: '2026-11-29T12:00:00.000Z' });
    await writer.close();
    const text = await lines(file);
    assert.equal(text.length, 3);
    assert.equal(text[2], '', 'the file ends with a newline');
    const [first, second] = text.slice(0, 2).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(first.v, 1);
    assert.equal(first.type, 'run');
    assert.ok(!Number.isNaN(Date.parse(first.ts as string)), 'ts is an ISO date');
    assert.equal(second.ts, '2026-11-29T12:00:00.000Z', 'a given ts is kept');
    assert.equal(writer.eventsWritten, 2);
  });

  it('keeps the order of appends that are not awaited one by one', async () => {
    const file = path.join(tmp(), 'trace.jsonl');
    const writer = await TraceWriter.open(file, { durable: true });
    await Promise.all([
      writer.append(run()),
      ...Array.from({ length: 40 }, (_, i) => writer.append(episode(i))),
    ]);
    await writer.close();
    const { events, skipped } = await readTraceEvents(file);
    assert.deepEqual(skipped, []);
    assert.deepEqual(
      events.slice(1).map((e) => (e.type === 'episode' ? e.index : -1)),
      Array.from({ length: 40 }, (_, i) => i),
    );
  });

  it('writes the header keys first, so a line says what it is in its first bytes', async () => {
    const file = path.join(tmp(), 'trace.jsonl');
    const writer = await TraceWriter.open(file, { durable: false });
    await writer.append(run());
    await writer.append({
      type: 'call.rehearsal',
      text: '…',
      result: { ok: true, value: { a: 1 } },
      arguments: {},
      tool: 'get_order',
      callId: 'e1.t1.c1',
      turnId: 'e1.t1',
      episodeId: 'e1',
    });
    await writer.close();
    const [runLine, callLine] = await lines(file);
    assert.deepEqual(Object.keys(JSON.parse(runLine) as object).slice(0, 4), [
      'v',
      'type',
      'ts',
      'runId',
    ]);
    assert.deepEqual(Object.keys(JSON.parse(callLine) as object), [
      'v',
      'type',
      'ts',
      'episodeId',
      'turnId',
      'callId',
      'tool',
      'text',
      'result',
      'arguments',
    ]);
    assert.ok(callLine.startsWith('{"v":1,"type":"call.rehearsal","ts":"'));
  });

  it('rejects an invalid event with a coded error and writes nothing', async () => {
    const file = path.join(tmp(), 'trace.jsonl');
    const writer = await TraceWriter.open(file, { durable: false });
    await writer.append(run());
    const before = (await fs.stat(file)).size;
    const err = await rejectsWith(writer.append({ ...run('../escape') }), 'INVALID_TRACE_EVENT');
    assert.match(err.message, /runId/);
    await rejectsWith(
      writer.append({ type: 'episode', episodeId: 'e1' } as unknown as NewTraceEvent),
      'INVALID_TRACE_EVENT',
    );
    assert.equal((await fs.stat(file)).size, before);
    await writer.append(episode(0)); // the writer still works
    await writer.close();
    assert.equal((await readTraceEvents(file)).events.length, 2);
  });

  it('ends a torn last line when reopening, so the next event stays readable', async () => {
    const file = path.join(tmp(), 'trace.jsonl');
    const first = await TraceWriter.open(file, { durable: false });
    await first.append(run());
    await first.close();
    await fs.appendFile(file, '{"v":1,"type":"episode","ts":"2026-1'); // a crash mid-write
    const second = await TraceWriter.open(file, { durable: false });
    await second.append(episode(0));
    await second.close();
    const result: string[] = [];
    const { events, skipped } = await readTrace(file, {
      onEvent: (e, at) => result.push(`${at.line}:${e.type}`),
    });
    assert.equal(events, 2);
    assert.deepEqual(result, ['1:run', '3:episode']);
    assert.deepEqual(
      skipped.map((s) => [s.line, s.reason]),
      [[2, 'not valid JSON']],
    );
  });

  it('does not add a newline to a file that ends cleanly', async () => {
    const file = path.join(tmp(), 'trace.jsonl');
    for (let i = 0; i < 2; i++) {
      const w = await TraceWriter.open(file, { durable: false });
      await w.append(i === 0 ? run() : episode(0));
      await w.close();
    }
    assert.deepEqual(
      (await lines(file)).map((l) => l === ''),
      [false, false, true],
    );
  });

  it('rejects appends once closed', async () => {
    const writer = await TraceWriter.open(path.join(tmp(), 'trace.jsonl'), { durable: false });
    await writer.close();
    await writer.close(); // closing twice is harmless
    const err = await rejectsWith(writer.append(run()), 'TRACE_CLOSED');
    assert.match(err.message, /new run/);
  });
});
