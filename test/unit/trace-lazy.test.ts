import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { TraceLibrary } from '../../src/core/trace/index/library';
import { readTraceHead } from '../../src/core/trace/format/traceHead';
import { traceTreeChildren, traceTreeParent } from '../../src/core/explorer/tree';
import { sampleShadowRun } from '../builders/samples';
import { TraceBuilder } from '../builders/traceBuilder';
import { useTempDir } from '../support/tempDir';

describe('large traces: first level from the first and last lines, index on demand', () => {
  const tmp = useTempDir();
  const write = async (name: string, text: string) => {
    const file = path.join(tmp(), name, 'trace.jsonl');
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, text);
    return file;
  };

  it('reads the run event and the run.end of a trace without indexing it', async () => {
    const file = await write('a', sampleShadowRun('big-run').text());
    const head = await readTraceHead(file);
    assert.equal(head.run?.runId, 'big-run');
    assert.equal(head.runEnd?.status, 'completed');
    assert.equal(head.endsCleanly, true);
    assert.equal(head.size, (await fs.stat(file)).size);
  });

  it('sees a run still being written, a torn end, and a first line that is not a run event', async () => {
    const text = sampleShadowRun('r').text();
    const withoutEnd = text.slice(0, text.lastIndexOf('\n', text.length - 2) + 1);
    const running = await readTraceHead(await write('running', withoutEnd));
    assert.equal(running.runEnd, undefined);
    assert.equal(running.endsCleanly, true);
    const torn = await readTraceHead(await write('torn', withoutEnd + '{"v":1,"type":"run.e'));
    assert.equal(torn.runEnd, undefined);
    assert.equal(torn.endsCleanly, false);
    const headless = await readTraceHead(
      await write('headless', withoutEnd.slice(withoutEnd.indexOf('\n') + 1)),
    );
    assert.equal(headless.run, undefined);
    assert.match(headless.problem ?? '', /episode event, not a run event/);
  });

  it('lists a large trace from its head, indexes it when opened, and reports progress', async () => {
    const big = new TraceBuilder('big-run', 'shadow');
    for (let i = 0; i < 300; i++) {
      const e = big.episode(`task-${i}`);
      e.turn('\n<tool_call>\n{"name": "get", "arguments": {"id": 1}}\n</tool_call>')
        .rehearse(0, { id: 1, v: 'x'.repeat(200) })
        .actual(0, { json: { id: 1, v: 'y'.repeat(200) } });
      e.end({ reward: 1, success: true });
    }
    big.end();
    const file = await write('big', big.text());
    const size = (await fs.stat(file)).size;
    const library = new TraceLibrary({ eagerIndexBytes: 10_000 });
    try {
      await library.setFiles([file]);
      assert.equal(library.index(file), undefined, 'not indexed when listed');
      assert.equal(library.isLazy(file), true);
      const [run] = traceTreeChildren(library);
      assert.equal(run.label, 'big-run');
      assert.match(run.description, /^shadow · models\/default · \d+ kB · not indexed$/);
      assert.equal(run.status, 'ok', 'run.end read from the last line');
      assert.equal(run.hasChildren, true);
      const placeholder = traceTreeChildren(library, run);
      assert.deepEqual(
        placeholder.map((n) => [n.kind, n.label]),
        [['message', 'Indexing… 0%']],
      );
      assert.equal(traceTreeParent(library, placeholder[0])?.id, run.id);

      const changes: (string | undefined)[] = [];
      library.onDidChange((f) => changes.push(f));
      const [a, b] = await Promise.all([library.ensureIndex(file), library.ensureIndex(file)]);
      assert.ok(a && a === b, 'one build for concurrent requests');
      assert.equal(library.isLazy(file), false);
      assert.ok(changes.includes(file));
      const episodes = traceTreeChildren(library, traceTreeChildren(library)[0]);
      assert.equal(episodes.length, 300);
      assert.equal(
        traceTreeChildren(library)[0].description,
        'shadow · 300/300 success · models/default',
      );
      // A run shows a page of its episodes (or calls), then one node for the rest.
      const paged = traceTreeChildren(library, traceTreeChildren(library)[0], {
        pageSize: () => 120,
      });
      assert.equal(paged.length, 121);
      assert.deepEqual([paged[120].kind, paged[120].label], ['more', '180 more episodes…']);
      assert.equal(traceTreeParent(library, paged[120])?.kind, 'run');
      const flat = traceTreeChildren(library, traceTreeChildren(library)[0], {
        pageSize: () => 250,
        sort: 'fidelity',
      });
      assert.deepEqual([flat.length, flat[250].label], [251, '50 more calls…']);
      assert.ok(size > 10_000);
    } finally {
      library.dispose();
    }
  });

  it('keeps a lazy trace up to date from its last lines while it grows', async () => {
    const text = sampleShadowRun('grow').text();
    const withoutEnd = text.slice(0, text.lastIndexOf('\n', text.length - 2) + 1);
    const file = await write('grow', withoutEnd);
    const library = new TraceLibrary({ eagerIndexBytes: 100 });
    try {
      await library.add(file);
      assert.equal(traceTreeChildren(library)[0].status, 'running');
      await fs.appendFile(file, text.slice(withoutEnd.length));
      await library.refresh(file);
      assert.equal(traceTreeChildren(library)[0].status, 'ok');
    } finally {
      library.dispose();
    }
  });
});
