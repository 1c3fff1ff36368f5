import * as assert from 'node:assert/strict';
import { CallTable } from '../../src/core/trace/index/callTable';
import { EpisodeTable } from '../../src/core/trace/index/episodeTable';
import { TurnTable } from '../../src/core/trace/index/turnTable';

/** A turn table with turns `t0 .. t<n-1>` of episode e1, and a call table over it. */
function tables(turns: number): { table: CallTable; turn: (i: number) => number } {
  const episodes = new EpisodeTable();
  const e1 = episodes.put('e1', 0, 'task-1', 'shadow', undefined, {
    line: 1,
    offset: 0,
    length: 10,
  });
  const t = new TurnTable();
  for (let i = 0; i < turns; i++)
    t.put(`t${i}`, e1, i, { line: i + 1, offset: i * 100, length: 10 }, 'calls');
  return { table: new CallTable(t, episodes), turn: (i) => t.row(`t${i}`)! };
}

describe('CallTable', () => {
  it('keeps thousands of calls across its growth, with offsets past 4 GB and only the fields each call has', () => {
    const { table, turn } = tables(1500);
    for (let i = 0; i < 3000; i++) {
      const row = table.put(`c${i}`, turn(i >> 1), 'get_order_details', i & 1);
      table.setLocation(row, 'rehearsal', {
        line: 3 * i + 1,
        offset: 5_000_000_000 + 1000 * i,
        length: 400,
      });
      if (i % 3 === 0) table.setActualOutcome(row, i % 2 ? 'TOOL_TIMEOUT' : undefined, i % 2 === 0);
    }
    assert.equal(table.count, 3000);
    assert.deepEqual(table.entry(table.row('c2997')!), {
      callId: 'c2997',
      turnId: 't1498',
      episodeId: 'e1',
      tool: 'get_order_details',
      index: 1,
      rehearsal: { line: 8992, offset: 5_002_997_000, length: 400 },
      actualError: 'TOOL_TIMEOUT',
      actualIsError: false,
    });
    assert.deepEqual(table.entry(table.row('c0')!), {
      callId: 'c0',
      turnId: 't0',
      episodeId: 'e1',
      tool: 'get_order_details',
      index: 0,
      rehearsal: { line: 1, offset: 5_000_000_000, length: 400 },
      actualIsError: true,
    });
    assert.deepEqual(Object.keys(table.entry(table.row('c1')!)).sort(), [
      'callId',
      'episodeId',
      'index',
      'rehearsal',
      'tool',
      'turnId',
    ]);
    assert.equal(table.ids()[1234], 'c1234');
  });

  it('updates a known call when a turn lists it again, keeping its events and first position', () => {
    const { table, turn } = tables(3);
    table.put('a', turn(1), 'x', 0);
    const row = table.put('b', turn(1), 'x', 1);
    table.setFidelity(
      row,
      'json',
      { exactMatch: true, fieldF1: 1, keyJaccard: 1, typeAgreement: 1, errorAgreement: true },
      undefined,
    );
    assert.equal(table.put('b', turn(2), 'y', 0), row);
    table.setFidelity(row, 'text', undefined, undefined);
    const entry = table.entry(row);
    assert.deepEqual(
      [entry.turnId, entry.tool, entry.index, entry.comparable, entry.scores?.exactMatch],
      ['t2', 'y', 0, 'text', true],
    );
    assert.deepEqual(table.ids(), ['a', 'b']);
    table.clear();
    assert.equal(table.count, 0);
    assert.equal(table.row('a'), undefined);
  });
});

describe('CallTable ids', () => {
  it('keeps no string for a call named <turn id>.c<position + 1>, finds it by id, and keeps any other id as given', () => {
    const { table, turn } = tables(2);
    const turns = (table as unknown as { turns: TurnTable }).turns;
    const put = (id: string, t: number, position: number) => {
      const row = table.put(id, turn(t), 'x', position);
      turns.addCall(turn(t), row);
      return row;
    };
    const a = put('t0.c1', 0, 0);
    const b = put('t0.c2', 0, 1);
    const c = put('replayed-7', 1, 0);
    const d = put('t1.c5', 1, 1); // the runner's pattern, but not its position: kept as given
    assert.deepEqual(table.ids(), ['t0.c1', 't0.c2', 'replayed-7', 't1.c5']);
    assert.deepEqual([...table.explicitIds.values()], ['replayed-7', 't1.c5']);
    assert.deepEqual(
      ['t0.c1', 't0.c2', 'replayed-7', 't1.c5'].map((id) => table.row(id)),
      [a, b, c, d],
    );
    for (const id of ['t0.c3', 't1.c1', 't1.c2', 't9.c1', 't0.c01', 't0.c0', 't0.', 'c1'])
      assert.equal(table.row(id), undefined, id);
    assert.equal(table.entry(b).callId, 't0.c2');
    // A turn listed again (its earlier calls keep their ids first, as the index does), without one of
    // them: that call is still found by its id.
    for (const r of turns.callRows(turn(0))) table.keepId(r);
    turns.put('t0', 0, 0, { line: 1, offset: 0, length: 10 }, 'calls');
    turns.addCall(turn(0), table.put('t0.c2', turn(0), 'x', 0)); // now first: its id is kept as given
    assert.equal(table.row('t0.c1'), a);
    assert.equal(table.row('t0.c2'), b);
    assert.equal(table.entry(b).index, 0);
    assert.deepEqual(table.ids(), ['t0.c1', 't0.c2', 'replayed-7', 't1.c5']);
  });
});
