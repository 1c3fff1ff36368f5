// `rehearse report` on a badly damaged trace, in a child with a small heap as a user's CLI would be.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { FidelityReport } from '../../src/core/report/fidelityReport';
import { MAX_SKIPPED_KEPT } from '../../src/core/trace/format/reader';
import { sampleShadowRun } from '../builders/samples';
import { rehearse } from '../support/cli';
import { useTempDir } from '../support/tempDir';

describe('rehearse CLI report in a 64 MB heap', () => {
  const tmp = useTempDir();

  it('a trace of two million corrupt lines: all counted, the first thousand listed, in a 64 MB heap', async () => {
    // A damaged file kept every skipped line in memory: 5M lines took 1.35 GB and --json died with
    // "Invalid string length". The CLI runs in a child with a small heap, as a user's would.
    const file = path.join(tmp(), 'damaged', 'trace.jsonl');
    await fs.mkdir(path.dirname(file));
    const lines = sampleShadowRun().text().split('\n').filter(Boolean);
    await fs.writeFile(
      file,
      lines[0] +
        '\n' +
        'x\n'.repeat(1_000_000) +
        '{"v":1\n'.repeat(1_000_000) +
        lines.slice(1).join('\n') +
        '\n',
    );
    const cli = path.join(__dirname, '..', '..', 'src', 'cli', 'main.js');
    const child = spawnSync(
      process.execPath,
      ['--max-old-space-size=64', cli, 'report', '--json', file],
      { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 },
    );
    assert.equal(child.status, 0, child.stderr);
    const json = JSON.parse(child.stdout) as FidelityReport;
    assert.equal(json.traces[0].skippedCount, 2_000_000);
    assert.equal(json.traces[0].skipped.length, MAX_SKIPPED_KEPT);
    assert.deepEqual(
      json.traces[0].skipped.slice(0, 2).map((s) => [s.line, s.reason]),
      [
        [2, 'not valid JSON'],
        [3, 'not valid JSON'],
      ],
    );
    assert.equal(json.traces[0].events, lines.length, 'every event around the damage is read');
    const text = await rehearse('report', file);
    assert.match(text.out, /· 2000000 skipped lines$/m);
    assert.match(text.out, /^ {4}\.\.\. and 1999980 more$/m);
  });
});
