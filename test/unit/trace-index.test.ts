import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../src/core/base/errors';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import { sampleImagineRun, sampleShadowRun } from '../builders/samples';
import { useTempDir } from '../support/tempDir';

const shadowLines = () => sampleShadowRun().text().split('\n').filter(Boolean);

describe('TraceIndex', () => {
  const tmp = useTempDir();
  const file = () => path.join(tmp(), 'trace.jsonl');

  it('indexes episodes, turns and calls of a trace with their outcomes', async () => {
    await sampleShadowRun().write(file());
    const index = await TraceIndex.build(file());
    assert.equal(index.run?.runId, '20261129-120000-shadow-sample');
    assert.equal(index.runEnd?.status, 'completed');
    assert.equal(index.eventCount, shadowLines().length);
    assert.equal(index.scannedBytes, (await fs.stat(file())).size);
    assert.deepEqual(
      index.episodes.map((e) => [e.episodeId, e.taskId, e.turnIds.length, e.end?.status]),
      [
        ['e1', 'retail-test-0007', 4, 'completed'],
        ['e2', 'retail-test-0012', 4, 'completed'],
        ['e3', 'retail-test-0031', 2, 'failed'],
      ],
    );
    assert.equal(index.episode('e3')?.end?.errorCode, 'TOOL_TIMEOUT');
    assert.deepEqual(
      index.turnsOf(index.episode('e2')!).map((t) => [t.turnId, t.kind, t.parseError]),
      [
        ['e2.t1', 'calls', undefined],
        ['e2.t2', 'error', 'JSON_DECODE_ERROR'],
        ['e2.t3', 'calls', undefined],
        ['e2.t4', 'final', undefined],
      ],
    );
    assert.equal(index.turn('e2.t4')?.answerPreview, 'It was delivered.');
    assert.equal(index.calls().length, 7);
    assert.equal(index.call('e1.t1.c1')?.scores?.exactMatch, true);
    assert.equal(index.call('e1.t3.c1')?.actualIsError, true);
    assert.equal(index.call('e1.t3.c1')?.scores?.errorAgreement, false);
    assert.equal(index.call('e2.t3.c1')?.rehearsalError, 'NO_EXECUTION_RESULT_TAG_FOUND');
    assert.equal(index.call('e3.t2.c1')?.actualError, 'TOOL_TIMEOUT');
    assert.equal(index.call('e3.t1.c1')?.comparable, 'text');
    assert.deepEqual(index.skipped, []);
    assert.equal(index.orphans, 0);
  });

  it('reads one event by its location', async () => {
    await sampleShadowRun().write(file());
    const index = await TraceIndex.build(file());
    const call = index.call('e1.t2.c1')!;
    const rehearsal = await index.readEvent(call.rehearsal!);
    assert.equal(rehearsal.type, 'call.rehearsal');
    assert.equal(rehearsal.type === 'call.rehearsal' && rehearsal.callId, 'e1.t2.c1');
    const actual = await index.readEvent(call.actual!);
    assert.equal(actual.type === 'call.actual' && actual.tool, 'get_order_details');
  });

  it('refresh reads only what was appended since the last scan', async () => {
    const all = shadowLines();
    await fs.writeFile(file(), all.slice(0, 6).join('\n') + '\n');
    const index = await TraceIndex.build(file());
    assert.equal(index.eventCount, 6);
    const scanned = index.scannedBytes;
    assert.equal(await index.refresh(), false, 'nothing new');
    // Scribble over bytes already scanned: a refresh that re-read them would report a corrupt line 1.
    const handle = await fs.open(file(), 'r+');
    await handle.write('#'.repeat(10), 0);
    await handle.close();
    await fs.appendFile(file(), all.slice(6).join('\n') + '\n');
    assert.equal(await index.refresh(), true);
    assert.ok(index.scannedBytes > scanned);
    assert.equal(index.eventCount, all.length);
    assert.deepEqual(index.skipped, []);
    assert.equal(index.runEnd?.status, 'completed');
    assert.equal(index.episodes.length, 3);
  });

  it('leaves a partial last line pending until it is completed', async () => {
    const all = shadowLines();
    await fs.writeFile(file(), all.slice(0, 3).join('\n') + '\n' + all[3].slice(0, 30));
    const index = await TraceIndex.build(file());
    assert.equal(index.eventCount, 3);
    assert.equal(index.pendingBytes, 30);
    assert.equal(index.skipped.length, 0, 'a line still being written is not an error');
    assert.equal(await index.refresh(), false, 'no change while the line is incomplete');
    await fs.appendFile(file(), all[3].slice(30) + '\n' + 'not json\n');
    assert.equal(await index.refresh(), true);
    assert.equal(index.eventCount, 4);
    assert.equal(index.pendingBytes, 0);
    assert.deepEqual(
      index.skipped.map((s) => s.line),
      [5],
    );
  });

  it('keeps line numbers right when an event was read before its newline arrived', async () => {
    const all = shadowLines();
    await fs.writeFile(file(), all.slice(0, 3).join('\n')); // complete JSON, newline not yet written
    const index = await TraceIndex.build(file());
    assert.equal(index.eventCount, 3);
    await fs.appendFile(file(), '\n' + all[3] + '\n' + 'not json\n' + all[4] + '\n');
    await index.refresh();
    assert.equal(index.eventCount, 5);
    assert.deepEqual(
      index.skipped.map((s) => s.line),
      [5],
      'the corrupt line is line 5 of the file',
    );
    assert.equal(index.turn('e1.t1')?.location.line, 3);
    assert.equal(index.call('e1.t1.c1')?.rehearsal?.line, 4);
  });

  it('starts an empty file with no events, then follows it as it grows', async () => {
    await fs.writeFile(file(), '');
    const index = await TraceIndex.build(file());
    assert.equal(index.eventCount, 0);
    assert.equal(await index.refresh(), false);
    await fs.appendFile(file(), '\n\n');
    await index.refresh();
    await index.refresh(); // only blank lines so far: still nothing, and no error
    await fs.appendFile(file(), shadowLines().slice(0, 2).join('\n') + '\n');
    await index.refresh();
    assert.equal(index.eventCount, 2);
    assert.equal(index.turn('e1.t1'), undefined);
    assert.equal(index.episode('e1')?.location.line, 4);
  });

  it('rebuilds when the file was replaced by a shorter one', async () => {
    await sampleShadowRun().write(file());
    const index = await TraceIndex.build(file());
    await fs.writeFile(file(), sampleImagineRun().text());
    assert.equal(await index.refresh(), true);
    assert.equal(index.run?.runId, '20261129-113000-imagine-sample');
    assert.equal(index.episodes.length, 1);
    assert.equal(index.calls().length, 1);
    assert.equal(index.eventCount, sampleImagineRun().events.length);
  });

  it('counts events that name an episode, turn or call the trace never introduced', async () => {
    const t = sampleImagineRun();
    const ts = '2026-11-29T12:00:00.000Z';
    const orphans = [
      {
        v: 1,
        type: 'turn',
        ts,
        episodeId: 'e9',
        turnId: 'e9.t1',
        index: 0,
        text: 'x',
        parse: { kind: 'final', answer: 'x' },
      },
      {
        v: 1,
        type: 'call.actual',
        ts,
        episodeId: 'e1',
        turnId: 'e1.t9',
        callId: 'e1.t9.c1',
        tool: 'x',
        source: 'mcp',
        response: { text: ['ok'] },
      },
      {
        v: 1,
        type: 'fidelity',
        ts,
        episodeId: 'e1',
        callId: 'e1.t9.c2',
        comparable: 'none',
        reason: 'no-actual',
      },
      {
        v: 1,
        type: 'episode.end',
        ts,
        episodeId: 'e9',
        status: 'completed',
        reward: null,
        success: null,
      },
    ];
    await fs.writeFile(file(), t.text() + orphans.map((o) => JSON.stringify(o)).join('\n') + '\n');
    const index = await TraceIndex.build(file());
    assert.equal(index.orphans, 4);
    assert.equal(index.episodes.length, 1);
    assert.equal(index.call('e1.t9.c1'), undefined);
  });

  it('attaches a rehearsed call its turn did not list (a replayed call) to that turn', async () => {
    const t = sampleImagineRun();
    const extra = {
      v: 1,
      type: 'call.rehearsal',
      ts: '2026-11-29T12:00:00.000Z',
      episodeId: 'e1',
      turnId: 'e1.t1',
      callId: 'e1.t1.c9',
      tool: 'get_order_details',
      arguments: {},
      text: '',
      result: { ok: false, code: 'EMPTY_SIMULATOR_OUTPUT', message: 'empty' },
    };
    await fs.writeFile(file(), t.text() + JSON.stringify(extra) + '\n');
    const index = await TraceIndex.build(file());
    assert.deepEqual(index.turn('e1.t1')?.callIds, ['e1.t1.c1', 'e1.t1.c9']);
    assert.equal(index.call('e1.t1.c9')?.index, 1);
    assert.equal(index.call('e1.t1.c9')?.rehearsalError, 'EMPTY_SIMULATOR_OUTPUT');
  });

  it('gives every call its own fidelity scores and counts, as its fidelity event holds them', async () => {
    await sampleShadowRun().write(file());
    const index = await TraceIndex.build(file());
    const scored = index.calls().filter((c) => c.fidelity);
    assert.ok(scored.length >= 5);
    for (const call of scored) {
      const event = await index.readEvent(call.fidelity!);
      assert.equal(event.type, 'fidelity');
      if (event.type !== 'fidelity') continue;
      assert.deepEqual(call.scores, event.scores, call.callId);
      assert.deepEqual(call.counts, event.counts, call.callId);
    }
    // Equal scores may be one shared object; unequal ones never are.
    const [exact, differing] = [index.call('e1.t1.c1')!, index.call('e1.t3.c1')!];
    assert.notDeepEqual(exact.scores, differing.scores);
  });

  it('summarises a call as its entry without the byte locations of its events', async () => {
    await sampleShadowRun().write(file());
    const index = await TraceIndex.build(file());
    for (const id of index.callIds()) {
      const { rehearsal, actual, fidelity, ...rest } = index.call(id)!;
      assert.ok(rehearsal || actual || fidelity, id);
      assert.deepEqual(index.callSummary(id), rest);
    }
    assert.equal(index.callSummary('nope'), undefined);
  });

  it('clears the error of a call when a later rehearsal or actual event of it succeeds', async () => {
    const t = sampleShadowRun();
    const ts = '2026-11-29T12:00:00.000Z';
    const retried = [
      {
        v: 1,
        type: 'call.rehearsal',
        ts,
        episodeId: 'e2',
        turnId: 'e2.t3',
        callId: 'e2.t3.c1',
        tool: 'get_order_details',
        arguments: {},
        text: '<execution_result>{}</execution_result>',
        result: { ok: true, value: {} },
      },
      {
        v: 1,
        type: 'call.actual',
        ts,
        episodeId: 'e3',
        turnId: 'e3.t2',
        callId: 'e3.t2.c1',
        tool: 'get_order_details',
        source: 'mcp',
        response: { text: ['ok'] },
      },
    ];
    await fs.writeFile(file(), t.text() + retried.map((o) => JSON.stringify(o)).join('\n') + '\n');
    const index = await TraceIndex.build(file());
    assert.deepEqual(index.skipped, []);
    assert.equal(index.call('e2.t3.c1')?.rehearsalError, undefined);
    assert.equal('rehearsalError' in index.call('e2.t3.c1')!, false);
    assert.equal(index.call('e3.t2.c1')?.actualError, undefined);
    assert.equal(index.call('e3.t2.c1')?.actualIsError, false);
  });

  it('throws a coded error when the file disappears', async () => {
    await sampleImagineRun().write(file());
    const index = await TraceIndex.build(file());
    await fs.rm(file());
    await assert.rejects(
      index.refresh(),
      (err: unknown) => err instanceof StudioError && err.code === 'TRACE_UNREADABLE',
    );
  });
});
