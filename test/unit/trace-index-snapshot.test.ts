import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { loadCallView } from '../../src/core/trace/index/callView';
import { saveIndexSnapshot, snapshotFileOf } from '../../src/core/trace/index/indexSnapshot';
import { loadIndexSnapshot, TraceIndex } from '../../src/core/trace/index/traceIndex';
import { sampleImagineRun, sampleShadowRun } from '../builders/samples';
import { codedOrNothing } from '../support/fuzz/targets';
import { useTempDir } from '../support/tempDir';

const ts = '2026-11-29T12:00:00.000Z';

/**
 * A trace with what an index has to keep beyond the plain cases: two runs' worth of episodes, an
 * episode id introduced twice, a replayed call its turn did not list, events naming unknown
 * episodes, a corrupt line, and scores of several values.
 */
function eventfulLines(): string[] {
  const shadow = sampleShadowRun().text().split('\n').filter(Boolean);
  const imagine = sampleImagineRun()
    .text()
    .split('\n')
    .filter(Boolean)
    .slice(1, -1)
    .map((l) => l.replace(/"(episodeId|turnId|callId)":"e/g, '"$1":"i'));
  const extra = [
    {
      v: 1,
      type: 'call.rehearsal',
      ts,
      episodeId: 'e1',
      turnId: 'e1.t1',
      callId: 'e1.t1.c9',
      tool: 'get_order_details',
      arguments: {},
      text: '',
      result: { ok: false, code: 'EMPTY_SIMULATOR_OUTPUT', message: 'empty' },
    },
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
      type: 'episode',
      ts,
      episodeId: 'e2',
      index: 7,
      taskId: 'retail-test-0099',
      mode: 'shadow',
      instruction: 'again',
    },
    {
      v: 1,
      type: 'turn',
      ts,
      episodeId: 'e2',
      turnId: 'e2.t9',
      index: 0,
      text: 'Done.',
      parse: { kind: 'final', answer: 'Done.' },
    },
  ].map((e) => JSON.stringify(e));
  return [
    ...shadow.slice(0, -1),
    ...imagine,
    '{"v":1,"type":"turn", torn and corrupt',
    ...extra,
    shadow[shadow.length - 1],
  ];
}

/** Everything the explorer can ask an index, as plain data. */
function described(index: TraceIndex): unknown {
  const turnIds = [
    ...new Set(
      index.episodes.flatMap((e) => [...e.turnIds, ...(index.episode(e.episodeId)?.turnIds ?? [])]),
    ),
  ];
  return {
    run: index.run,
    runEnd: index.runEnd,
    skipped: index.skipped,
    skippedCount: index.skippedCount,
    orphans: index.orphans,
    eventCount: index.eventCount,
    scanned: index.scannedBytes,
    episodes: index.episodes,
    byId: index.episodes.map((e) => index.episode(e.episodeId)),
    turns: turnIds.map((id) => index.turn(id)),
    calls: index.calls(),
    summaries: index.callIds().map((id) => index.callSummary(id)),
  };
}

describe('Saved trace index (trace.index)', () => {
  const tmp = useTempDir();
  const traceIn = async (...parts: string[]) => {
    const file = path.join(tmp(), ...parts, 'trace.jsonl');
    await fs.mkdir(path.dirname(file), { recursive: true });
    return file;
  };

  it('reads back as the index built from nothing: episodes, turns, calls, scores, skipped lines, orphans', async () => {
    const file = await traceIn('.rehearsal', 'runs', 'r1');
    await fs.writeFile(file, eventfulLines().join('\n') + '\n');
    const built = await TraceIndex.build(file);
    assert.ok(
      built.skipped.length === 1 && built.orphans === 1,
      'the trace has the cases it is meant to have',
    );
    // An episode introduced twice keeps one entry: the later event's fields, the turns of both.
    assert.deepEqual(
      [built.episode('e2')?.taskId, built.episode('e2')?.turnIds],
      ['retail-test-0099', ['e2.t1', 'e2.t2', 'e2.t3', 'e2.t4', 'e2.t9']],
    );
    assert.equal(built.episodes.length, 4);
    assert.deepEqual(built.turn('e1.t1')?.callIds, ['e1.t1.c1', 'e1.t1.c9']);
    assert.equal(await saveIndexSnapshot(built), snapshotFileOf(file));
    assert.equal(snapshotFileOf(file), path.join(path.dirname(file), 'trace.index'));
    const restored = (await loadIndexSnapshot(file))?.index;
    assert.ok(restored, 'the saved index is used');
    assert.deepEqual(described(restored), described(built));
    // It reads calls like the built one.
    const view = await loadCallView(restored, 'e1.t2.c1');
    assert.equal(view.actual?.tool, 'get_order_details');
  });

  it('keeps the count of skipped lines past the thousand it lists', async () => {
    const file = await traceIn('.rehearsal', 'runs', 'r1');
    await fs.writeFile(
      file,
      [...eventfulLines(), ...Array.from({ length: 2500 }, () => 'garbage')].join('\n') + '\n',
    );
    const built = await TraceIndex.build(file);
    assert.deepEqual([built.skippedCount, built.skipped.length], [2501, 1000]);
    await saveIndexSnapshot(built);
    const restored = (await loadIndexSnapshot(file))?.index;
    assert.ok(restored, 'the saved index is used');
    assert.deepEqual(described(restored), described(built));
  });

  it('is brought up to date with what was appended since it was saved, as a build of the whole trace would be', async () => {
    const file = await traceIn('.rehearsal', 'runs', 'r1');
    const lines = eventfulLines();
    await fs.writeFile(file, lines.slice(0, 9).join('\n') + '\n' + lines[9].slice(0, 20));
    const partial = await TraceIndex.build(file);
    assert.ok(partial.pendingBytes > 0, 'a half-written last line is pending');
    await saveIndexSnapshot(partial);
    await fs.writeFile(file, lines.join('\n') + '\n');
    const opened = await TraceIndex.open(file, { save: false });
    assert.deepEqual(described(opened), described(await TraceIndex.build(file)));
  });

  it('is ignored, and the trace indexed from nothing, when it no longer describes the trace: rewritten, shortened or replaced', async () => {
    const file = await traceIn('.rehearsal', 'runs', 'r1');
    const lines = eventfulLines();
    const write = (text: string) => fs.writeFile(file, text);
    const cases: [string, () => Promise<void>][] = [
      [
        'a value changed in place (same length)',
        () => write(lines.join('\n').replace('"status":"pending"', '"status":"shipped"') + '\n'),
      ],
      ['shortened', () => write(lines.slice(0, 5).join('\n') + '\n')],
      ['replaced by another run', () => write(sampleImagineRun().text())],
    ];
    for (const [what, change] of cases) {
      await write(lines.join('\n') + '\n');
      await saveIndexSnapshot(await TraceIndex.build(file));
      await new Promise((r) => setTimeout(r, 5)); // a later modification time
      await change();
      assert.equal(await loadIndexSnapshot(file), undefined, what);
      assert.deepEqual(
        described(await TraceIndex.open(file, { save: false })),
        described(await TraceIndex.build(file)),
        what,
      );
    }
  });

  it('is ignored, never an error, when damaged: truncated, bytes changed, another version, not an index at all', async () => {
    const file = await traceIn('.rehearsal', 'runs', 'r1');
    await fs.writeFile(file, eventfulLines().join('\n') + '\n');
    const built = await TraceIndex.build(file);
    const saved = await fs.readFile(await saveIndexSnapshot(built));
    const expected = described(built);
    const indexFile = snapshotFileOf(file);
    const damaged = [
      saved.subarray(0, saved.length - 3),
      saved.subarray(0, 40),
      Buffer.from('RSTIDX2\n' + saved.subarray(8).toString('latin1'), 'latin1'),
      Buffer.from('{"not":"an index"}'),
      Buffer.alloc(0),
    ];
    for (const bytes of damaged) {
      await fs.writeFile(indexFile, bytes);
      assert.equal(await loadIndexSnapshot(file), undefined);
      assert.deepEqual(described(await TraceIndex.open(file, { save: false })), expected);
    }
    // Random damage: whatever a changed byte does, nothing throws; a saved index that still loads
    // only ever points inside the trace, so opening any of its calls reads or fails with a code.
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(saved.length - 1), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        async (changes) => {
          const bytes = Buffer.from(saved);
          for (const [at, value] of changes) bytes[at] = value;
          await fs.writeFile(indexFile, bytes);
          const loaded = await loadIndexSnapshot(file);
          if (!loaded) return;
          const { index } = loaded;
          for (const id of index.callIds()) await codedOrNothing(() => loadCallView(index, id));
          for (const e of index.episodes) index.turnsOf(e).forEach((t) => index.callsOf(t));
        },
      ),
      { numRuns: 150, seed: 11 },
    );
  });

  it('is not used when one of its offsets was damaged (zeroed): the trace is read instead, and every call opens', async () => {
    const file = await traceIn('.rehearsal', 'runs', 'r1');
    await fs.writeFile(file, eventfulLines().join('\n') + '\n');
    const built = await TraceIndex.build(file);
    const expected = described(built);
    const views = await Promise.all(built.callIds().map((id) => loadCallView(built, id)));
    // Zero the saved offset of the last call's actual response (within the trace's bounds, so only
    // the order of the locations can tell).
    const offsets = built.snapshotState().calls.offsets;
    const kind = offsets.findIndex((column) => column.some((o) => o > 0));
    const row = offsets[kind].findLastIndex((o) => o > 0);
    const original = offsets[kind][row];
    offsets[kind][row] = 0;
    await saveIndexSnapshot(built);
    offsets[kind][row] = original;
    assert.equal(await loadIndexSnapshot(file), undefined, 'the damaged saved index is refused');
    const opened = await TraceIndex.open(file, { save: false });
    assert.deepEqual(described(opened), expected);
    assert.deepEqual(
      await Promise.all(opened.callIds().map((id) => loadCallView(opened, id))),
      views,
    );
    // A score that is no share at all (fieldF1 -5) is not believed either.
    const scores = built.snapshotState().calls.scoreSets as { fieldF1: number }[];
    assert.ok(scores.length > 0);
    const f1 = scores[0].fieldF1;
    scores[0].fieldF1 = -5;
    await saveIndexSnapshot(built);
    scores[0].fieldF1 = f1;
    assert.equal(
      await loadIndexSnapshot(file),
      undefined,
      'a saved index with fieldF1 -5 is refused',
    );
    assert.deepEqual(described(await TraceIndex.open(file, { save: false })), expected);
  });

  it('is saved by open after a long scan, and only inside a .rehearsal folder', async () => {
    const inside = await traceIn('.rehearsal', 'runs', 'r1');
    const outside = await traceIn('elsewhere');
    for (const file of [inside, outside])
      await fs.writeFile(file, eventfulLines().join('\n') + '\n');
    await TraceIndex.open(inside);
    assert.equal(
      existsSync(snapshotFileOf(inside)),
      false,
      'a small trace is not worth saving under the default threshold',
    );
    await TraceIndex.open(inside, { saveAfterBytes: 0 });
    await TraceIndex.open(outside, { saveAfterBytes: 0 });
    assert.equal(existsSync(snapshotFileOf(inside)), true);
    assert.equal(
      existsSync(snapshotFileOf(outside)),
      false,
      'no file is written beside a trace outside .rehearsal',
    );
    assert.deepEqual(
      (await fs.readdir(path.dirname(inside))).sort(),
      ['trace.index', 'trace.jsonl'],
      'no temporary file is left behind',
    );
    // A failed save is reported, and the index is still returned.
    await fs.rm(snapshotFileOf(inside));
    await fs.mkdir(snapshotFileOf(inside));
    const errors: Error[] = [];
    const index = await TraceIndex.open(inside, {
      saveAfterBytes: 0,
      onSaveError: (e) => errors.push(e),
    });
    assert.equal(errors.length, 1);
    assert.deepEqual(described(index), described(await TraceIndex.build(inside)));
  });
});
