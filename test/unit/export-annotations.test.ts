import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { annotationsFileFor, appendAnnotationEvent } from '../../src/core/annotations/store';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import { exportRows } from '../../src/core/training/exportRows';
import { sampleShadowRun } from '../builders/samples';
import { rehearse } from '../support/cli';
import { useTempDir } from '../support/tempDir';

describe('dataset export with fidelity annotations', () => {
  const tmp = useTempDir();

  /** The sample shadow run with a person's marks: an error per severity, an accepted call, a mark deleted again, a torn last line. */
  async function annotatedRun(): Promise<string> {
    const file = path.join(tmp(), 'runs', 'r1', 'trace.jsonl');
    await sampleShadowRun('r1').write(file);
    const notes = annotationsFileFor(file);
    await appendAnnotationEvent(notes, {
      type: 'mark',
      id: 'a-1',
      author: 'ana',
      callId: 'e1.t2.c1',
      episodeId: 'e1',
      kind: 'hallucinated_value',
      severity: 'major',
      path: '$.status',
      note: 'guessed pending',
    });
    await appendAnnotationEvent(notes, {
      type: 'mark',
      id: 'a-2',
      author: 'ana',
      callId: 'e1.t2.c1',
      kind: 'missing_field',
      severity: 'minor',
      path: '$.fulfillments',
    });
    await appendAnnotationEvent(notes, {
      type: 'mark',
      id: 'a-3',
      author: 'bo',
      callId: 'e1.t3.c1',
      kind: 'wrong_error_state',
      severity: 'critical',
    });
    await appendAnnotationEvent(notes, { type: 'delete', id: 'a-3', author: 'bo' });
    await appendAnnotationEvent(notes, {
      type: 'accept',
      id: 'a-4',
      author: 'bo',
      callId: 'e2.t1.c1',
    });
    await appendAnnotationEvent(notes, {
      type: 'mark',
      id: 'a-5',
      author: 'ana',
      callId: 'e1.t1.c1',
      kind: 'other',
      severity: 'minor',
    });
    await fs.appendFile(notes, '{"v":1,"type":"mark","id":"a-6"');
    return file;
  }

  async function rows(
    file: string,
    options: { annotations?: boolean } = {},
  ): Promise<{ rows: DatasetRow[]; summary: Awaited<ReturnType<typeof exportRows>> }> {
    const out: DatasetRow[] = [];
    const summary = await exportRows(
      [file],
      {
        actSource: 'demonstration',
        roles: ['rehearse'],
        actualRehearsals: true,
        policyRehearsals: true,
        ...options,
      },
      (r) => out.push(r),
    );
    return { rows: out, summary };
  }

  it("weighs a grounding row by the worst severity of its call's errors and carries the annotations on every rehearse row of the call", async () => {
    const { rows: out, summary } = await rows(await annotatedRun());
    const byId = new Map(out.map((r) => [r.id, r]));
    const grounding = byId.get('e1/e1.t2.c1/rehearse-actual')!;
    assert.equal(grounding.weight, 3, 'major is the worst of major and minor');
    assert.deepEqual(grounding.annotations, [
      {
        verdict: 'error',
        kind: 'hallucinated_value',
        severity: 'major',
        path: '$.status',
        note: 'guessed pending',
        author: 'ana',
      },
      {
        verdict: 'error',
        kind: 'missing_field',
        severity: 'minor',
        path: '$.fulfillments',
        author: 'ana',
      },
    ]);
    // The policy's own (wrong) rehearsal as target is not pushed up, but says what was wrong with it.
    const own = byId.get('e1/e1.t2.c1/rehearse')!;
    assert.equal(own.weight, 1);
    assert.deepEqual(own.annotations, grounding.annotations);
    assert.equal(byId.get('e1/e1.t1.c1/rehearse-actual')!.weight, 2, 'minor');
    assert.equal(
      byId.get('e1/e1.t3.c1/rehearse-actual')!.weight,
      1,
      'a deleted mark counts for nothing',
    );
    assert.equal(byId.get('e1/e1.t3.c1/rehearse-actual')!.annotations, undefined);
    const accepted = byId.get('e2/e2.t1.c1/rehearse-actual')!;
    assert.equal(accepted.weight, 1);
    assert.deepEqual(accepted.annotations, [{ verdict: 'acceptable', author: 'bo' }]);
    assert.equal(byId.get('e1/e1.t2.c1/rehearse-actual')!.annotations?.length, 2);
    assert.equal(summary.annotatedCalls, 3);
    assert.equal(summary.skippedAnnotationLines, 1, 'the torn last line');
    assert.ok(out.filter((r) => !r.annotations).every((r) => r.weight === 1));
  });

  it('ignores the annotations when told to', async () => {
    const { rows: out, summary } = await rows(await annotatedRun(), { annotations: false });
    assert.ok(out.every((r) => r.weight === 1 && r.annotations === undefined));
    assert.equal(summary.annotatedCalls, 0);
  });

  it('rehearse export writes them and says how many calls were annotated; --no-annotations leaves them out', async () => {
    const file = await annotatedRun();
    const out = path.join(tmp(), 'rows.jsonl');
    const run = await rehearse('export', file, '--out', out, '--roles', 'rehearse');
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /; 3 annotated calls; skipped 1 unreadable annotation line\n/);
    const written = (await fs.readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as DatasetRow);
    assert.equal(written.find((r) => r.id === 'e1/e1.t2.c1/rehearse-actual')?.weight, 3);
    const plain = await rehearse(
      'export',
      file,
      '--out',
      out,
      '--roles',
      'rehearse',
      '--no-annotations',
    );
    assert.equal(plain.code, 0, plain.err);
    assert.doesNotMatch(plain.out, /annotated/);
    assert.ok(
      (await fs.readFile(out, 'utf8'))
        .trim()
        .split('\n')
        .every((l) => !('annotations' in (JSON.parse(l) as object))),
    );
  });
});
