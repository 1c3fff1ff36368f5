// One write path (docs/reliability.md, "One write path"): every file the studio writes lands inside
// the workspace's .rehearsal/ or the folder the user named. A link inside .rehearsal/ that leads out
// is refused with PATH_OUTSIDE_WORKSPACE and nothing is written outside; an --out the user typed is
// trusted as typed, links in its own path included. Runs played for real into such folders:
// test/e2e/reliability-write-path-runs.test.ts.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { appendAnnotationEvent } from '../../src/core/annotations/store';
import {
  mkdirInside,
  namedRoot,
  openForWrite,
  removeInside,
  renameInside,
  workspaceRoot,
  writeFileInside,
  writeRootOf,
} from '../../src/core/base/writePath';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import { sampleShadowRun } from '../builders/samples';
import { rehearse } from '../support/cli';
import { listing, outside, useWritePathLayout } from '../support/writePathFixture';

describe('one write path: writes stay inside .rehearsal/ or the --out named', function () {
  this.timeout(120_000);
  const { tmp, layout } = useWritePathLayout();

  it('no trace.index is saved into a run folder that links out of .rehearsal/ (it is, into a real one)', async () => {
    const { away, runs } = await layout();
    await sampleShadowRun().write(path.join(away, 'trace.jsonl'));
    await fs.mkdir(runs);
    await fs.symlink(away, path.join(runs, 'linked'));
    const errors: Error[] = [];
    const index = await TraceIndex.open(path.join(runs, 'linked', 'trace.jsonl'), {
      saveAfterBytes: 0,
      onSaveError: (e) => errors.push(e),
    });
    assert.ok(index.eventCount > 0, 'the trace is read all the same');
    assert.deepEqual(await listing(away), ['trace.jsonl']);
    assert.equal(errors.length, 1);
    assert.ok(outside(errors[0]), String(errors[0]));
    // The same trace in a run folder of its own gets its index: the refusal above is the link's.
    const real = path.join(runs, 'real', 'trace.jsonl');
    await fs.mkdir(path.dirname(real));
    await fs.copyFile(path.join(away, 'trace.jsonl'), real);
    await TraceIndex.open(real, { saveAfterBytes: 0 });
    assert.ok(existsSync(path.join(runs, 'real', 'trace.index')));
  });

  it('annotations of a run whose folder links out of .rehearsal/ are refused; the outside folder is untouched', async () => {
    const { away, runs } = await layout();
    await fs.mkdir(runs);
    await fs.symlink(away, path.join(runs, 'linked'));
    await assert.rejects(
      appendAnnotationEvent(path.join(runs, 'linked', 'annotations.jsonl'), {
        type: 'accept',
        id: 'a1',
        author: 'ana',
        callId: 'e1.t1.c1',
      }),
      outside,
    );
    assert.deepEqual(await listing(away), []);
  });

  it('`export --out` through a linked folder the user named is written there; under .rehearsal/ the same link is refused', async () => {
    const { ws, away } = await layout();
    const trace = path.join(tmp(), 'source', 'trace.jsonl');
    await sampleShadowRun().write(trace);
    await fs.symlink(away, path.join(ws, 'exports'));
    const named = await rehearse('export', trace, '--out', path.join(ws, 'exports', 'rows.jsonl'));
    assert.equal(named.code, 0, named.err);
    assert.deepEqual(await listing(away), ['rows.jsonl']);
    assert.ok((await fs.readFile(path.join(away, 'rows.jsonl'), 'utf8')).length > 0);

    await fs.symlink(away, path.join(ws, '.rehearsal', 'exports'));
    const inside = await rehearse(
      'export',
      trace,
      '--out',
      path.join(ws, '.rehearsal', 'exports', 'more.jsonl'),
    );
    assert.equal(inside.code, 1, inside.out);
    assert.match(
      inside.err,
      /Refusing to write .*exports: .*exports is a symbolic link to .*away\./,
    );
    assert.deepEqual(await listing(away), ['rows.jsonl']);
  });

  it('the write functions: `..` and absolute paths out, a link in the file’s place and a NUL are refused; links that stay inside are followed', async () => {
    const { ws, away } = await layout();
    const root = workspaceRoot(ws);
    const rehearsal = path.join(ws, '.rehearsal');
    for (const bad of [
      `${rehearsal}/../x`,
      path.join(away, 'x'),
      `${rehearsal}/a/../../.rehearsal-other/x`,
      `${rehearsal}/a\0b`,
    ])
      await assert.rejects(writeFileInside(root, bad, 'x'), outside, bad);
    await fs.symlink(path.join(away, 'target'), path.join(rehearsal, 'file-link'));
    await assert.rejects(openForWrite(root, 'file-link', 'w'), outside);
    await fs.symlink('nowhere', path.join(rehearsal, 'dangling'));
    await assert.rejects(writeFileInside(root, 'dangling/x', 'x'), outside);
    await assert.rejects(mkdirInside(root, path.join(rehearsal, 'dangling', 'y')), outside);
    // `.rehearsal` itself linked out of the workspace is as much outside as anything under it.
    const ws2 = path.join(tmp(), 'ws2');
    await fs.mkdir(ws2);
    await fs.symlink(away, path.join(ws2, '.rehearsal'));
    await assert.rejects(writeFileInside(workspaceRoot(ws2), 'runs/x', 'x'), outside);
    assert.deepEqual(await listing(away), []);

    // A link that stays inside .rehearsal/ is followed; rename and remove act on entries inside.
    await fs.mkdir(path.join(rehearsal, 'real'));
    await fs.symlink(path.join(rehearsal, 'real'), path.join(rehearsal, 'alias'));
    await writeFileInside(root, path.join(rehearsal, 'alias', 'a.txt'), 'a');
    assert.equal(await fs.readFile(path.join(rehearsal, 'real', 'a.txt'), 'utf8'), 'a');
    await renameInside(root, path.join(rehearsal, 'real', 'a.txt'), path.join(rehearsal, 'b.txt'));
    await removeInside(root, path.join(rehearsal, 'b.txt'));
    assert.deepEqual(await fs.readdir(path.join(rehearsal, 'real')), []);
    assert.equal(existsSync(path.join(rehearsal, 'b.txt')), false);

    // A folder named as --out is trusted as named, even when it is itself a link.
    await fs.symlink(away, path.join(tmp(), 'out-link'));
    const out = namedRoot(path.join(tmp(), 'out-link'));
    await writeFileInside(out, path.join(tmp(), 'out-link', 'sub', 'f.txt'), 'f');
    assert.deepEqual(await listing(away), ['sub', path.join('sub', 'f.txt')]);
    assert.deepEqual(writeRootOf(path.join(ws, '.rehearsal', 'runs', 'r1')), root);
    assert.deepEqual(writeRootOf(path.join(tmp(), 'out-link')), out);
  });
});
