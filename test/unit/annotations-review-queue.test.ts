import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { reviewQueue } from '../../src/core/explorer/reviewQueue';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import { sampleShadowRun } from '../builders/samples';
import { useTempDir } from '../support/tempDir';

describe('review queue (Review Mismatches)', () => {
  const tmp = useTempDir();

  it('holds the calls whose rehearsal missed, least faithful first, minus those already reviewed', async () => {
    const file = path.join(tmp(), 'trace.jsonl');
    await sampleShadowRun().write(file);
    const index = await TraceIndex.build(file);
    const all = reviewQueue(index, () => false);
    // The rehearsal that did not parse first, then by field F1; exact calls and the tool that timed out are not in it.
    assert.deepEqual(all.pending, ['e2.t3.c1', 'e1.t3.c1', 'e3.t1.c1', 'e1.t2.c1']);
    assert.deepEqual([all.total, all.reviewed], [4, 0]);
    const some = reviewQueue(index, (id) => id === 'e1.t3.c1' || id === 'e2.t1.c1');
    assert.deepEqual(some.pending, ['e2.t3.c1', 'e3.t1.c1', 'e1.t2.c1']);
    assert.deepEqual(
      [some.total, some.reviewed],
      [4, 1],
      'an exact call annotated is not counted as reviewed',
    );
  });
});
