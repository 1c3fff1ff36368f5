import * as assert from 'node:assert/strict';
import { CallTable } from '../../src/core/trace/callTable';

describe('CallTable', () => {
  it('keeps thousands of calls across its growth, with offsets past 4 GB and only the fields each call has', () => {
    const table = new CallTable();
    for (let i = 0; i < 3000; i++) {
      const row = table.put(`c${i}`, `t${i >> 1}`, 'e1', 'get_order_details', i & 1);
      table.setLocation(row, 'rehearsal', { line: 3 * i + 1, offset: 5_000_000_000 + 1000 * i, length: 400 });
      if (i % 3 === 0) table.setActualOutcome(row, i % 2 ? 'TOOL_TIMEOUT' : undefined, i % 2 === 0);
    }
    assert.equal(table.count, 3000);
    assert.deepEqual(table.entry(table.row('c2997')!), {
      callId: 'c2997', turnId: 't1498', episodeId: 'e1', tool: 'get_order_details', index: 1,
      rehearsal: { line: 8992, offset: 5_002_997_000, length: 400 }, actualError: 'TOOL_TIMEOUT', actualIsError: false,
    });
    assert.deepEqual(table.entry(table.row('c0')!), {
      callId: 'c0', turnId: 't0', episodeId: 'e1', tool: 'get_order_details', index: 0,
      rehearsal: { line: 1, offset: 5_000_000_000, length: 400 }, actualIsError: true,
    });
    assert.deepEqual(Object.keys(table.entry(table.row('c1')!)).sort(), ['callId', 'episodeId', 'index', 'rehearsal', 'tool', 'turnId']);
    assert.equal(table.ids()[1234], 'c1234');
  });

  it('updates a known call when a turn lists it again, keeping its events and first position', () => {
    const table = new CallTable();
    table.put('a', 't1', 'e1', 'x', 0);
    const row = table.put('b', 't1', 'e1', 'x', 1);
    table.setFidelity(row, 'json', { exactMatch: true, fieldF1: 1, keyJaccard: 1, typeAgreement: 1, errorAgreement: true }, undefined);
    assert.equal(table.put('b', 't2', 'e1', 'y', 0), row);
    table.setFidelity(row, 'text', undefined, undefined);
    const entry = table.entry(row);
    assert.deepEqual([entry.turnId, entry.tool, entry.index, entry.comparable, entry.scores?.exactMatch], ['t2', 'y', 0, 'text', true]);
    assert.deepEqual(table.ids(), ['a', 'b']);
    table.clear();
    assert.equal(table.count, 0);
    assert.equal(table.row('a'), undefined);
  });
});
