// `rehearse export --format trl` (issue 42, part 5): a recorded run's training rows as the Hugging
// Face dataset TRL loads as is, one parquet file in its conversational prompt-completion format,
// written by the trainer's Python (pyarrow) and read back here with `datasets`.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { ensureServerBundles } from '../support/servers';
import { rehearse } from '../support/cli';
import { repoRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';
import { trainerPython } from '../support/trainerPython';

const run = promisify(execFile);

/** What `datasets` reads from a parquet file: its rows' columns, as the trainer's Python sees them. */
async function readParquet(file: string): Promise<Record<string, unknown>[]> {
  const script =
    'import json,sys; from datasets import load_dataset; ' +
    'print(json.dumps(list(load_dataset("parquet", data_files=sys.argv[1], split="train"))))';
  const { stdout } = await run(trainerPython(), ['-c', script, file], {
    cwd: repoRoot(),
    maxBuffer: 64 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>[];
}

describe('export --format trl: rows as the parquet dataset TRL loads', function () {
  this.timeout(180_000);
  const dir = useTempDir('rehearsal-export-trl-');
  before(async () => {
    await ensureServerBundles();
  });

  it('writes every row with its prompt, completion and tools; the JSONL export says the same', async () => {
    const tasks = path.join(dir(), 'tasks');
    assert.equal((await rehearse('generate', 'bank', '--count', '2', '--out', tasks)).code, 0);
    const runs = path.join(dir(), 'runs');
    const played = await rehearse('run', tasks, '--policy', 'reference', '--out', runs);
    assert.equal(played.code, 0, played.err);
    const jsonl = path.join(dir(), 'out', 'rows.jsonl');
    const parquet = path.join(dir(), 'out', 'rows.parquet');
    assert.equal((await rehearse('export', runs, '--out', jsonl)).code, 0);
    const exported = await rehearse('export', runs, '--format', 'trl', '--out', parquet);
    assert.equal(exported.code, 0, exported.err);
    const rows = (await fs.readFile(jsonl, 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) => JSON.parse(l) as { id: string; role: string; target: string; messages: unknown[] },
      );
    const read = await readParquet(parquet);
    assert.deepEqual(
      read.map((r) => r['id']),
      rows.map((r) => r.id),
    );
    for (const [i, r] of read.entries()) {
      assert.deepEqual(r['completion'], [{ role: 'assistant', content: rows[i].target }]);
      assert.equal((r['prompt'] as unknown[]).length, rows[i].messages.length);
      assert.equal(r['role'], rows[i].role);
      if (r['role'] === 'act')
        assert.ok(JSON.parse(r['tools'] as string).length > 0, 'act rows carry tools');
    }
    assert.match(exported.out, /wrote \d+ rows of 2 tasks to .*rows\.parquet/);
  });
});
