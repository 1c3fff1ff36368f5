import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../src/core/base/errors';
import type { RawLine } from '../../src/core/trace/format/lineReader';
import { readLineBatches, readLines } from '../../src/core/trace/format/lineReader';
import type { EventLocation } from '../../src/core/trace/format/reader';
import {
  MAX_SKIPPED_KEPT,
  readEventAt,
  readTrace,
  readTraceEvents,
} from '../../src/core/trace/format/reader';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import { readAnnotations } from '../../src/core/annotations/store';
import { sampleShadowRun } from '../builders/samples';
import { useTempDir } from '../support/tempDir';

const sampleLines = () => sampleShadowRun().text().split('\n').filter(Boolean);

async function collect(file: string, options: Parameters<typeof readTrace>[1] = {}) {
  const seen: { line: number; type: string }[] = [];
  const result = await readTrace(file, {
    ...options,
    onEvent: (e, at) => seen.push({ line: at.line, type: e.type }),
  });
  return { ...result, seen };
}

describe('readTrace', () => {
  const tmp = useTempDir();
  const write = async (content: string | Buffer) => {
    const file = path.join(tmp(), 'trace.jsonl');
    await fs.writeFile(file, content);
    return file;
  };

  it('reads every event of a complete trace, in order, with its location', async () => {
    const all = sampleLines();
    const file = await write(all.join('\n') + '\n');
    const locations: EventLocation[] = [];
    const r = await readTrace(file, { onEvent: (_e, at) => locations.push(at) });
    assert.equal(r.events, all.length);
    assert.deepEqual(r.skipped, []);
    assert.equal(r.bytes, Buffer.byteLength(all.join('\n') + '\n'));
    assert.deepEqual(
      locations.map((l) => l.line),
      all.map((_, i) => i + 1),
    );
    // Offsets and lengths are bytes: the line is found again at its location.
    const buf = await fs.readFile(file);
    locations.forEach((l, i) =>
      assert.equal(buf.subarray(l.offset, l.offset + l.length).toString('utf8'), all[i]),
    );
  });

  it('skips a torn last line and counts it with its line number', async () => {
    const all = sampleLines();
    const torn = all.slice(0, 5).join('\n') + '\n' + all[5].slice(0, 40);
    const r = await collect(await write(torn));
    assert.equal(r.events, 5);
    assert.deepEqual(
      r.skipped.map((s) => [s.line, s.reason]),
      [[6, 'torn last line (incomplete write)']],
    );
  });

  it('counts a complete last event that lacks only its newline', async () => {
    const all = sampleLines();
    const r = await collect(await write(all.slice(0, 3).join('\n')));
    assert.equal(r.events, 3);
    assert.deepEqual(r.skipped, []);
  });

  it('skips a corrupt line in the middle and reads on', async () => {
    const all = sampleLines();
    const r = await collect(
      await write(
        [all[0], '{"v":1,"type":"turn",garbage', all[1], '[1,2,3]', all[2]].join('\n') + '\n',
      ),
    );
    assert.deepEqual(
      r.seen.map((s) => s.line),
      [1, 3, 5],
    );
    assert.deepEqual(
      r.skipped.map((s) => [s.line, s.reason.split(':')[0]]),
      [
        [2, 'not valid JSON'],
        [4, 'not a valid event'],
      ],
    );
  });

  it('counts every skipped line but keeps only the first thousand; the explorer index and the annotation reader too', async () => {
    const all = sampleLines();
    const bad = ['x', '{"v":1,', '{"v":1,"type":"run"}', 'null', '{ "not": "closed"'];
    const garbage = Array.from({ length: 3 * MAX_SKIPPED_KEPT }, (_, i) => bad[i % bad.length]);
    const file = await write([all[0], ...garbage, ...all.slice(1)].join('\n') + '\n');
    const r = await collect(file);
    assert.equal(r.events, all.length);
    assert.equal(r.skippedCount, garbage.length);
    assert.equal(r.skipped.length, MAX_SKIPPED_KEPT);
    assert.deepEqual(
      r.skipped.slice(0, 5).map((s) => [s.line, s.reason.split(':')[0]]),
      [
        [2, 'not valid JSON'],
        [3, 'not valid JSON'],
        [4, 'not a valid event'],
        [5, 'not a valid event'],
        [6, 'not valid JSON'],
      ],
    );
    const index = await TraceIndex.build(file);
    assert.deepEqual([index.skippedCount, index.skipped], [r.skippedCount, r.skipped]);
    const notes = path.join(tmp(), 'annotations.jsonl');
    await fs.writeFile(notes, garbage.join('\n') + '\n');
    const set = await readAnnotations(notes);
    assert.deepEqual([set.skippedCount, set.skipped.length], [garbage.length, MAX_SKIPPED_KEPT]);
  });

  it('skips a line with invalid UTF-8 bytes', async () => {
    const all = sampleLines();
    const bad = Buffer.concat([
      Buffer.from(all[0] + '\n'),
      Buffer.from('{"v":1,"type":"run","x":"'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"}\n'),
      Buffer.from(all[1] + '\n'),
    ]);
    const r = await collect(await write(bad));
    assert.equal(r.events, 2);
    assert.deepEqual(
      r.skipped.map((s) => [s.line, s.reason]),
      [[2, 'invalid UTF-8']],
    );
  });

  it('ignores blank lines, CRLF line ends and whitespace-only lines', async () => {
    const all = sampleLines();
    const r = await collect(
      await write(['', all[0], '   ', all[1] + '\r', '\t', all[2], ''].join('\n')),
    );
    assert.equal(r.events, 3);
    assert.deepEqual(r.skipped, []);
    assert.deepEqual(
      r.seen.map((s) => s.line),
      [2, 4, 6],
    );
  });

  it('skips a line longer than maxLineBytes without holding it in memory', async () => {
    const all = sampleLines();
    const long = all.find((l) => l.length > 600)!;
    const short = all[all.length - 1];
    assert.ok(all[0].length < 500 && short.length < 500);
    const file = await write([all[0], long, short].join('\n') + '\n');
    const r = await collect(file, { maxLineBytes: 500 });
    assert.deepEqual(
      r.seen.map((s) => s.line),
      [1, 3],
    );
    assert.deepEqual(
      r.skipped.map((s) => [s.line, s.reason]),
      [[2, `line too long (${Buffer.byteLength(long)} bytes)`]],
    );
    const raw = [];
    for await (const l of readLines(file, { maxLineBytes: 500 })) raw.push(l);
    assert.equal(raw[1].oversized, true);
    assert.equal(raw[1].bytes.length, 0);
  });

  it('reads lines that span its 1 MiB read chunks', async () => {
    const all = sampleLines();
    const big = JSON.parse(all[0]) as Record<string, unknown>;
    big.settings = { blob: 'x'.repeat(3 * 1024 * 1024) };
    const r = await collect(await write([all[0], JSON.stringify(big), all[1]].join('\n') + '\n'));
    assert.equal(r.events, 3);
  });

  it('reads the same lines a chunk at a time as one by one, across chunks and with a torn end', async () => {
    const all = sampleLines();
    const big = JSON.parse(all[0]) as Record<string, unknown>;
    big.settings = { blob: 'x'.repeat(3 * 1024 * 1024) };
    const file = await write(
      [...all, JSON.stringify(big), ...all].join('\n') + '\n' + all[1].slice(0, 20),
    );
    const one: RawLine[] = [];
    for await (const l of readLines(file, { start: Buffer.byteLength(all[0]) + 1, firstLine: 2 }))
      one.push(l);
    const batched: RawLine[] = [];
    let batches = 0;
    for await (const batch of readLineBatches(file, {
      start: Buffer.byteLength(all[0]) + 1,
      firstLine: 2,
    })) {
      batches++;
      batched.push(...batch);
    }
    const shape = (l: RawLine) => [
      l.line,
      l.offset,
      l.length,
      l.terminated,
      l.bytes.toString('utf8'),
    ];
    assert.deepEqual(batched.map(shape), one.map(shape));
    assert.equal(one.length, 2 * all.length + 1);
    assert.equal(one.at(-1)?.terminated, false);
    assert.ok(batches > 2 && batches < one.length, `${batches} batches`);
  });

  it('reports lines of a newer schema version, saying to update', async () => {
    const all = sampleLines();
    const newer = JSON.stringify({ ...(JSON.parse(all[1]) as object), v: 2 });
    const r = await collect(await write([all[0], newer].join('\n') + '\n'));
    assert.equal(r.events, 1);
    assert.equal(r.skipped[0].line, 2);
    assert.match(r.skipped[0].reason, /newer studio \(trace schema v2\); update Rehearsal Studio/);
  });

  it('throws a coded error for a path it cannot read', async () => {
    await assert.rejects(
      readTrace(path.join(tmp(), 'missing.jsonl')),
      (err: unknown) =>
        err instanceof StudioError &&
        err.code === 'TRACE_UNREADABLE' &&
        /no such file/.test(err.message),
    );
    await assert.rejects(
      readTrace(tmp()),
      (err: unknown) => err instanceof StudioError && err.code === 'TRACE_NOT_A_FILE',
    );
  });

  it('reads an empty file as no events', async () => {
    const r = await collect(await write(''));
    assert.deepEqual({ events: r.events, skipped: r.skipped }, { events: 0, skipped: [] });
  });

  it('reads one event at a known location, and says when the file changed', async () => {
    const all = sampleLines();
    const file = await write(all.join('\n') + '\n');
    const locations: EventLocation[] = [];
    await readTrace(file, { onEvent: (_e, at) => locations.push(at) });
    const third = await readEventAt(file, locations[2]);
    assert.deepEqual(third, JSON.parse(all[2]));
    await fs.writeFile(file, 'x'.repeat(locations[2].offset + locations[2].length));
    await assert.rejects(
      readEventAt(file, locations[2]),
      (err: unknown) =>
        err instanceof StudioError && err.code === 'TRACE_CHANGED' && /refresh/.test(err.message),
    );
  });

  it('readTraceEvents returns the events and the skipped lines', async () => {
    const all = sampleLines();
    const { events, skipped } = await readTraceEvents(
      await write(all.slice(0, 2).join('\n') + '\nnope\n'),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['run', 'episode'],
    );
    assert.equal(skipped[0].line, 3);
  });
});
