import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import type { FileHandle as FsFileHandle } from 'node:fs/promises';
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

/** The methods of Node's FileHandle that the writer calls, as the real class has them. */
type FileHandleMethods = Pick<FsFileHandle, 'appendFile' | 'datasync'>;

/**
 * Watches the real FileHandle's `appendFile` and `datasync` while `body` runs (each still does its
 * work; `fault` may make an appendFile fail instead), logging them in the order they happen.
 */
async function watchingFileHandles<T>(
  log: string[],
  body: () => Promise<T>,
  fault?: (call: number, data: Buffer, write: (data: Buffer) => Promise<void>) => Promise<void>,
): Promise<T> {
  const probe = await fs.open(__filename, 'r');
  const proto = Object.getPrototypeOf(probe) as FileHandleMethods;
  await probe.close();
  const { appendFile, datasync } = proto;
  let writes = 0;
  proto.appendFile = async function (this: FsFileHandle, data: string | Uint8Array) {
    const bytes = Buffer.from(data);
    log.push(`write ${bytes.toString('utf8').split('\n').length - 1}`);
    const write = (d: Buffer) => appendFile.call(this, d);
    return fault ? fault(++writes, bytes, write) : write(bytes);
  };
  proto.datasync = async function (this: FsFileHandle) {
    await datasync.call(this);
    log.push('datasync');
  };
  try {
    return await body();
  } finally {
    proto.appendFile = appendFile;
    proto.datasync = datasync;
  }
}

/** One episode's events: its start, then `count - 1` turns. */
function episodeEvents(index: number, count: number): NewTraceEvent[] {
  return [
    episode(index),
    ...Array.from({ length: count - 1 }, (_, t): NewTraceEvent => ({
      type: 'turn',
      episodeId: `e${index + 1}`,
      turnId: `e${index + 1}.t${t + 1}`,
      index: t,
      text: 'Done.',
      parse: { kind: 'final', answer: 'Done.' },
    })),
  ];
}

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

  describe('group commit', () => {
    it('8 episodes appending at once: every append resolves after its line is written and synced, in order, one fdatasync per commit window', async () => {
      const file = path.join(tmp(), 'trace.jsonl');
      const log: string[] = [];
      const perEpisode = 10;
      const writer = await watchingFileHandles(log, async () => {
        const w = await TraceWriter.open(file, { durable: true });
        await w.append(run());
        // Each episode awaits its own events one by one, as the runner's episodes do.
        await Promise.all(
          Array.from({ length: 8 }, async (_, i) => {
            for (const [k, event] of episodeEvents(i, perEpisode).entries()) {
              await w.append(event);
              log.push(`acked e${i + 1}#${k}`);
            }
          }),
        );
        await w.close();
        return w;
      });
      const events = 1 + 8 * perEpisode;
      // Each acknowledgement comes after the write holding its line and a datasync after that write.
      const written: string[] = [];
      let synced = 0;
      let unsynced = 0;
      for (const entry of log) {
        if (entry.startsWith('write ')) unsynced += Number(entry.slice(6));
        else if (entry === 'datasync') {
          synced += unsynced;
          unsynced = 0;
        } else {
          written.push(entry);
          // The run's event was synced first; then every episode event acknowledged so far.
          assert.ok(written.length <= synced - 1, `acknowledged before its datasync: ${entry}`);
        }
      }
      assert.equal(synced, events);
      const syncs = log.filter((e) => e === 'datasync').length;
      assert.equal(syncs, log.filter((e) => e.startsWith('write ')).length, 'one per write');
      assert.equal(syncs, writer.commitsWritten);
      // The run event alone, then one window per round of the 8 episodes' events.
      assert.ok(syncs <= 1 + perEpisode, `${syncs} fdatasyncs for ${events} events`);
      assert.equal(writer.eventsWritten, events);

      const { events: read, skipped } = await readTraceEvents(file);
      assert.deepEqual(skipped, []);
      assert.equal(read.length, events);
      for (let i = 0; i < 8; i++) {
        const own = read.filter((e) => 'episodeId' in e && e.episodeId === `e${i + 1}`);
        assert.deepEqual(
          own.map((e) => (e.type === 'turn' ? e.turnId : e.type)),
          ['episode', ...Array.from({ length: perEpisode - 1 }, (_, t) => `e${i + 1}.t${t + 1}`)],
        );
      }
    });

    it('appends made while a commit is in progress share the next window, in the order appended', async () => {
      const file = path.join(tmp(), 'trace.jsonl');
      const log: string[] = [];
      await watchingFileHandles(log, async () => {
        const w = await TraceWriter.open(file, { durable: true });
        const first = w.append(run());
        // Appended while the first window is being written: they wait for the next one.
        await new Promise((r) => setImmediate(r));
        const rest = Array.from({ length: 50 }, (_, i) => w.append(episode(i)));
        await Promise.all([first, ...rest]);
        await w.close();
      });
      assert.deepEqual(log, ['write 1', 'datasync', 'write 50', 'datasync']);
      const { events } = await readTraceEvents(file);
      assert.deepEqual(
        events.map((e) => (e.type === 'episode' ? e.index : -1)),
        [-1, ...Array.from({ length: 50 }, (_, i) => i)],
      );
    });

    it('a write failing mid-window rejects that window and every later append with TRACE_WRITE_FAILED, cut back to the last whole line', async () => {
      const file = path.join(tmp(), 'trace.jsonl');
      const log: string[] = [];
      let w: TraceWriter | undefined;
      let later: Promise<void>[] = [];
      const settled = await watchingFileHandles(
        log,
        async () => {
          w = await TraceWriter.open(file, { durable: true });
          await w.append(run());
          const window = Array.from({ length: 6 }, (_, i) => w!.append(episode(i)));
          // Queued behind the failing window.
          await new Promise((r) => setImmediate(r));
          later = Array.from({ length: 3 }, (_, i) => w!.append(episode(10 + i)));
          return Promise.allSettled([...window, ...later]);
        },
        async (call, data, write) => {
          if (call < 2) return write(data);
          // A full disk: part of the window reaches the file, then the write fails.
          await write(data.subarray(0, Math.floor(data.length / 2)));
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
            code: 'ENOSPC',
          });
        },
      );
      assert.equal(settled.length, 9);
      for (const s of settled) {
        assert.equal(s.status, 'rejected');
        const reason = (s as PromiseRejectedResult).reason as StudioError;
        assert.equal(reason.code, 'TRACE_WRITE_FAILED');
        assert.match(reason.message, /ENOSPC/);
      }
      assert.deepEqual(log.slice(0, 3), ['write 1', 'datasync', 'write 6']);
      assert.equal(log.filter((e) => e.startsWith('write ')).length, 2, 'nothing written after');
      assert.equal(w!.writeFailure?.code, 'TRACE_WRITE_FAILED');
      await rejectsWith(w!.append(episode(20)), 'TRACE_WRITE_FAILED');
      await w!.close();
      const { events, skipped } = await readTraceEvents(file);
      assert.deepEqual(skipped, [], 'the torn half of the window was cut');
      assert.deepEqual(
        events.map((e) => e.type),
        ['run'],
      );
      assert.equal(w!.eventsWritten, 1);
    });
  });
});
