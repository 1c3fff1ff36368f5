import * as assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { StudioError } from '../../src/core/base/errors';
import { AnnotationLibrary } from '../../src/core/annotations/library';
import {
  ANNOTATION_KINDS,
  ANNOTATION_KIND_LABELS,
  describeAnnotation,
} from '../../src/core/annotations/schema';
import {
  annotationsFileFor,
  appendAnnotationEvent,
  readAnnotations,
} from '../../src/core/annotations/store';
import { suggestedKind } from '../../src/core/annotations/suggest';
import { validateAnnotationEvent } from '../../src/core/annotations/validate';
import { fromRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';

const lines = async (file: string) =>
  (await fs.readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('annotations', () => {
  const tmp = useTempDir();
  const trace = () => path.join(tmp(), 'runs', 'r1', 'trace.jsonl');
  const library = () => new AnnotationLibrary(() => 'ana');

  it('lives beside the trace as annotations.jsonl', () => {
    assert.equal(
      annotationsFileFor('/w/.rehearsal/runs/r1/trace.jsonl'),
      '/w/.rehearsal/runs/r1/annotations.jsonl',
    );
  });

  it('has exactly the eight kinds, as stable snake_case codes, each with a label', () => {
    assert.deepEqual(
      [...ANNOTATION_KINDS],
      [
        'hallucinated_value',
        'missing_field',
        'extra_field',
        'wrong_type',
        'wrong_error_state',
        'stale_state',
        'format_error',
        'other',
      ],
    );
    assert.equal(ANNOTATION_KIND_LABELS.wrong_type, 'wrong type or schema');
    const schema = JSON.parse(readFileSync(fromRoot('schemas/annotation.schema.json'), 'utf8')) as {
      definitions: { kind: { enum: string[] } };
    };
    assert.deepEqual(
      schema.definitions.kind.enum,
      [...ANNOTATION_KINDS],
      'the JSON Schema and the types list the same kinds',
    );
  });

  it('appends a mark as one event line, and reads it back by call id', async () => {
    const lib = library();
    const a = await lib.mark(trace(), {
      callId: 'e1.t2.c1',
      episodeId: 'e1',
      tool: 'get_order_details',
      kind: 'hallucinated_value',
      severity: 'major',
      path: '$.status',
      note: 'guessed pending',
    });
    const written = await lines(annotationsFileFor(trace()));
    assert.equal(written.length, 1);
    assert.deepEqual(
      Object.keys(written[0]).slice(0, 8),
      ['v', 'type', 'ts', 'id', 'author', 'callId', 'episodeId', 'tool'],
      'header keys first',
    );
    assert.equal(written[0].type, 'mark');
    assert.equal(written[0].path, '$.status');
    assert.equal(written[0].author, 'ana');
    const set = await readAnnotations(annotationsFileFor(trace()));
    assert.deepEqual(set.forCall('e1.t2.c1'), [a]);
    assert.equal(a.verdict, 'error');
    assert.equal(describeAnnotation(a), 'hallucinated value (major) at $.status');
    assert.deepEqual(set.summary('e1.t2.c1'), {
      errors: 1,
      accepted: false,
      worstSeverity: 'major',
    });
    assert.equal(set.summary('e1.t1.c1'), undefined);
  });

  it('reads and writes only a regular file of its own: a link to a device or to a file outside is refused, the outside file untouched', async () => {
    const file = annotationsFileFor(trace());
    await fs.mkdir(path.dirname(file), { recursive: true });
    const mark = {
      callId: 'e1.t2.c1',
      episodeId: 'e1',
      tool: 'get_order_details',
      kind: 'other' as const,
      severity: 'minor' as const,
    };
    await fs.symlink('/dev/zero', file);
    await assert.rejects(
      readAnnotations(file),
      (err: StudioError) =>
        err.code === 'ANNOTATIONS_NOT_A_FILE' &&
        /is a symbolic link; .*Move it aside/.test(err.message),
    );
    await assert.rejects(
      library().mark(trace(), mark),
      (err: StudioError) => err.code === 'ANNOTATIONS_NOT_A_FILE',
    );
    await fs.rm(file);
    const outside = path.join(tmp(), 'outside.txt');
    await fs.writeFile(outside, "not the studio's\n");
    await fs.symlink(outside, file);
    await assert.rejects(
      library().mark(trace(), mark),
      (err: StudioError) => err.code === 'ANNOTATIONS_NOT_A_FILE',
    );
    assert.equal(await fs.readFile(outside, 'utf8'), "not the studio's\n");
    await fs.rm(file);
    await fs.mkdir(file);
    await assert.rejects(
      readAnnotations(file),
      (err: StudioError) =>
        err.code === 'ANNOTATIONS_NOT_A_FILE' && /not a regular file/.test(err.message),
    );
  });

  it('keeps edits and deletions as new events and folds them into the current set', async () => {
    const lib = library();
    const a = await lib.mark(trace(), {
      callId: 'e1.t2.c1',
      kind: 'hallucinated_value',
      severity: 'minor',
      path: '$.status',
    });
    const b = await lib.accept(trace(), { callId: 'e1.t1.c1', note: 'close enough' });
    await lib.edit(trace(), a.id, {
      severity: 'critical',
      note: 'the agent cancels on it',
      path: null,
    });
    await lib.delete(trace(), b.id);
    const written = await lines(annotationsFileFor(trace()));
    assert.deepEqual(
      written.map((e) => e.type),
      ['mark', 'accept', 'edit', 'delete'],
      'append-only: nothing is rewritten',
    );
    const set = await readAnnotations(annotationsFileFor(trace()));
    assert.equal(set.size, 1);
    const now = set.get(a.id)!;
    assert.equal(now.severity, 'critical');
    assert.equal(now.note, 'the agent cancels on it');
    assert.equal(now.path, undefined, 'path: null removes the path');
    assert.equal(now.kind, 'hallucinated_value');
    assert.equal(set.get(b.id), undefined);
    assert.deepEqual(set.skipped, []);
  });

  it('skips and counts a torn last line, an invalid event and an edit of an unknown annotation', async () => {
    const file = annotationsFileFor(trace());
    await appendAnnotationEvent(file, {
      type: 'mark',
      id: 'a1',
      author: 'ana',
      callId: 'e1.t1.c1',
      kind: 'other',
      severity: 'minor',
    });
    await fs.appendFile(
      file,
      '{"v":1,"type":"mark","ts":"2026-11-29T12:00:00Z","id":"a2","author":"ana","callId":"e1.t1.c1","kind":"made_up","severity":"minor"}\n',
    );
    await fs.appendFile(
      file,
      '{"v":1,"type":"edit","ts":"2026-11-29T12:00:00Z","id":"nope","author":"ana","changes":{"note":"x"}}\n',
    );
    await fs.appendFile(file, '{"v":1,"type":"delete","ts":"2026-11-29T12:0');
    const set = await readAnnotations(file);
    assert.deepEqual(
      set.all().map((a) => a.id),
      ['a1'],
    );
    assert.deepEqual(
      set.skipped.map((s) => [s.line, s.reason.replace(/:.*/, '')]),
      [
        [2, 'not a valid annotation event'],
        [3, 'edit of unknown annotation nope'],
        [4, 'torn last line (incomplete write)'],
      ],
    );
    // A writer after the crash ends the torn line first: the new event is intact.
    await appendAnnotationEvent(file, { type: 'delete', id: 'a1', author: 'ana' });
    const after = await readAnnotations(file);
    assert.equal(after.size, 0);
    assert.equal(after.skipped.length, 3);
  });

  it('refuses to write an invalid event, and an edit of an annotation that does not exist', async () => {
    await assert.rejects(
      appendAnnotationEvent(annotationsFileFor(trace()), {
        type: 'mark',
        id: 'a1',
        author: 'ana',
        callId: 'e1',
        kind: 'nonsense' as never,
        severity: 'minor',
      }),
      (e: StudioError) => e.code === 'INVALID_ANNOTATION',
    );
    await assert.rejects(
      library().edit(trace(), 'a-missing', { note: 'x' }),
      (e: StudioError) => e.code === 'UNKNOWN_ANNOTATION',
    );
    await assert.rejects(
      library().mark(trace(), { callId: '../x', kind: 'other', severity: 'minor' }),
      (e: StudioError) => e.code === 'INVALID_ID',
    );
  });

  it('refuses to give an acceptance a kind when the file says so', async () => {
    const file = annotationsFileFor(trace());
    await appendAnnotationEvent(file, {
      type: 'accept',
      id: 'a1',
      author: 'ana',
      callId: 'e1.t1.c1',
    });
    await appendAnnotationEvent(file, {
      type: 'edit',
      id: 'a1',
      author: 'ana',
      changes: { kind: 'other' },
    });
    const set = await readAnnotations(file);
    assert.equal(set.get('a1')?.kind, undefined);
    assert.match(set.skipped[0].reason, /acceptance/);
  });

  it('says when a file was written by a newer studio', async () => {
    const file = annotationsFileFor(trace());
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, '{"v":2,"type":"mark"}\n');
    assert.match((await readAnnotations(file)).skipped[0].reason, /newer studio/);
  });

  it('fires a change when another process appends to the file and it is read again', async () => {
    const lib = library();
    await lib.load(trace());
    const fired: string[] = [];
    lib.onDidChange((f) => fired.push(f));
    await lib.load(trace());
    assert.deepEqual(fired, [], 'nothing changed');
    await appendAnnotationEvent(annotationsFileFor(trace()), {
      type: 'accept',
      id: 'a9',
      author: 'bo',
      callId: 'e1.t1.c1',
    });
    await lib.load(trace());
    assert.deepEqual(fired, [trace()]);
    assert.equal(lib.get(trace())?.get('a9')?.author, 'bo');
  });

  it('validates events against the JSON Schema', () => {
    assert.equal(
      validateAnnotationEvent({
        v: 1,
        type: 'mark',
        ts: 't',
        id: 'a1',
        author: 'x',
        callId: 'e1.t1.c1',
        kind: 'other',
        severity: 'major',
        path: '$.a',
      }).ok,
      true,
    );
    assert.equal(
      validateAnnotationEvent({
        v: 1,
        type: 'mark',
        ts: 't',
        id: 'a1',
        author: 'x',
        callId: 'e1.t1.c1',
        kind: 'other',
        severity: 'major',
        path: 'a',
      }).ok,
      false,
    );
    assert.equal(
      validateAnnotationEvent({ v: 1, type: 'edit', ts: 't', id: 'a1', author: 'x', changes: {} })
        .ok,
      false,
    );
    assert.equal(
      validateAnnotationEvent({
        v: 1,
        type: 'edit',
        ts: 't',
        id: 'a1',
        author: 'x',
        changes: { colour: 'red' },
      }).ok,
      false,
    );
  });

  it('suggests a kind from the kind of difference', () => {
    assert.equal(suggestedKind('added'), 'missing_field');
    assert.equal(suggestedKind('removed'), 'extra_field');
    assert.equal(suggestedKind('typeChanged'), 'wrong_type');
    assert.equal(suggestedKind('changed'), 'hallucinated_value');
    assert.equal(suggestedKind(undefined), 'other');
  });
});
