// `rehearse export --memory-file`: memories a recipe made (not recorded by a private-rehearsal run),
// read by each demonstration's act rows as a committed episode reads its memory, and the file's
// bounds. measure:foresight's memory-reading rows are made so.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { memoryContext } from '../../src/core/runner/privateRehearsal';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import { MAX_MEMORY_BYTES } from '../../src/core/training/memoryFile';
import { SAMPLE_RUN_IDS, sampleTraceFile, writeSampleWorkspace } from '../builders/sampleWorkspace';
import { rehearse } from '../support/cli';
import { useTempDir } from '../support/tempDir';

const readRows = async (file: string) =>
  (await fs.readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as DatasetRow);

describe('rehearse export --memory-file', () => {
  const dir = useTempDir('memory-file-');
  const trace = async () => {
    await writeSampleWorkspace(dir());
    return sampleTraceFile(dir(), SAMPLE_RUN_IDS.shadow);
  };

  it("writes a task's act rows again, each memory a system message after the task's", async () => {
    const source = await trace();
    const plain = path.join(dir(), 'plain.jsonl');
    assert.equal((await rehearse('export', source, '--roles', 'act', '--out', plain)).code, 0);
    const task = (await readRows(plain))[0].task!;
    const memories = path.join(dir(), 'memories.jsonl');
    const memory = 'Imagined transfer_between_accounts -> refused: Account ID is a joint account';
    await fs.writeFile(
      memories,
      [
        JSON.stringify({ task, memory }),
        '',
        JSON.stringify({ task: 'no-such-task', memory: 'Imagined pay_bill -> ok' }),
      ].join('\n') + '\n',
    );
    const out = path.join(dir(), 'rows.jsonl');
    const r = await rehearse(
      ...['export', source, '--roles', 'act', '--out', out, '--memory-file', memories],
    );
    assert.equal(r.code, 0, r.err);
    const rows = await readRows(out);
    const again = rows.filter((row) => row.id.endsWith('/memory-1'));
    const originals = (await readRows(plain)).filter((row) => row.task === task);
    assert.equal(again.length, originals.length);
    assert.ok(again.every((row) => row.task === task));
    for (const row of again) {
      const system = row.messages.filter((m) => m.role === 'system').map((m) => m.content);
      assert.equal(system.at(-1), memoryContext(memory));
      assert.equal(row.messages.findIndex((m) => m.role === 'user') > 0, true);
    }
    // The rows without a memory are the plain export's.
    assert.equal(rows.length - again.length, (await readRows(plain)).length);
  });

  it('refuses a line that is not {task, memory} or a memory past its bound, naming the line', async () => {
    const source = await trace();
    const file = path.join(dir(), 'bad.jsonl');
    const out = path.join(dir(), 'rows.jsonl');
    for (const [line, says] of [
      ['{"task": "t", "memory": 3}', 'line 2: expected {"task"'],
      ['not json', 'line 2: expected {"task"'],
      [
        JSON.stringify({ task: 't', memory: 'x'.repeat(MAX_MEMORY_BYTES + 1) }),
        'line 2: the memory is longer',
      ],
    ]) {
      await fs.writeFile(file, `{"task": "t", "memory": "ok"}\n${line}\n`);
      const r = await rehearse('export', source, '--out', out, '--memory-file', file);
      assert.equal(r.code, 2, r.out);
      assert.match(r.err, new RegExp(says.replace(/[{}"]/g, '.')));
    }
    await fs.writeFile(file, '\n');
    const empty = await rehearse('export', source, '--out', out, '--memory-file', file);
    assert.equal(empty.code, 2);
    assert.match(empty.err, /holds no memory/);
  });
});
