import * as assert from 'node:assert/strict';
import { LineSplitter } from '../../src/core/base/lines';

describe('LineSplitter: a stream cut into chunks anywhere gives the same lines', () => {
  it('joins a line cut across chunks, keeps empty lines, and holds the unterminated end as rest', () => {
    const lines: string[] = [];
    const s = new LineSplitter((line) => lines.push(line));
    for (const chunk of ['{"ev', 'ent":1}\n\nsec', 'ond\nthi', 'rd']) s.push(chunk);
    assert.deepEqual(lines, ['{"event":1}', '', 'second']);
    assert.equal(s.rest, 'third');
    s.push('\n');
    assert.deepEqual(lines, ['{"event":1}', '', 'second', 'third']);
    assert.equal(s.rest, '');
  });
});
