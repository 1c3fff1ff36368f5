import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../src/core/base/errors';
import { findRunTraces, resolveTraceArgument } from '../../src/core/trace/format/discover';
import {
  assertValidId,
  callId,
  episodeId,
  isValidId,
  newRunId,
  turnId,
} from '../../src/core/trace/format/ids';
import { sampleImagineRun, sampleShadowRun } from '../builders/samples';
import { useTempDir } from '../support/tempDir';

const isCoded = (code: string) => (err: unknown) => err instanceof StudioError && err.code === code;

describe('ids', () => {
  it('accepts the ids the studio makes', () => {
    for (const id of [
      'e1',
      'e1.t2',
      'e1.t2.c1',
      '20261129-120000-shadow-3fa2c1',
      'a:b',
      'A_b-c.d',
      'x'.repeat(128),
    ])
      assert.ok(isValidId(id), id);
  });

  it('rejects anything that could name a path outside .rehearsal/', () => {
    for (const id of [
      '',
      '.',
      '..',
      '../x',
      'a/../b',
      'a/b',
      'a\\b',
      '/abs',
      '.hidden',
      '-flag',
      'a b',
      'e1\n',
      'é',
      'x'.repeat(129),
      'a\u0000b',
    ]) {
      assert.equal(isValidId(id), false, JSON.stringify(id));
      assert.throws(
        () => assertValidId(id, 'call'),
        (err: unknown) =>
          isCoded('INVALID_ID')(err) && (err as Error).message.includes('Invalid call id'),
      );
    }
    for (const notString of [undefined, null, 1, {}, ['e1']])
      assert.equal(isValidId(notString), false);
  });

  it('makes sortable, valid run ids and nested episode, turn and call ids', () => {
    const id = newRunId('shadow', new Date(Date.UTC(2026, 10, 29, 19, 15, 0)));
    assert.match(id, /^20261129-191500-shadow-[0-9a-f]{6}$/);
    assert.ok(isValidId(id));
    assert.notEqual(newRunId('shadow'), newRunId('shadow'));
    assert.equal(callId(turnId(episodeId(0), 1), 2), 'e1.t2.c3');
  });
});

describe('resolveTraceArgument', () => {
  const tmp = useTempDir();
  let shadowFile: string;
  let imagineFile: string;
  beforeEach(async () => {
    const runs = path.join(tmp(), 'ws', '.rehearsal', 'runs');
    shadowFile = path.join(runs, '20261129-120000-shadow-sample', 'trace.jsonl');
    imagineFile = path.join(runs, '20261129-113000-imagine-sample', 'trace.jsonl');
    await sampleShadowRun().write(shadowFile);
    await sampleImagineRun().write(imagineFile);
    await fs.mkdir(path.join(runs, '20261130-000000-shadow-notyet')); // a run folder without a trace yet
  });

  it('takes a trace file as it is', async () => {
    assert.deepEqual(await resolveTraceArgument(imagineFile), [imagineFile]);
  });

  it('finds the trace of a run folder', async () => {
    assert.deepEqual(await resolveTraceArgument(path.dirname(shadowFile)), [shadowFile]);
  });

  it('finds every run of a workspace, its .rehearsal folder or its runs folder, newest first', async () => {
    const ws = path.join(tmp(), 'ws');
    for (const arg of [
      ws,
      path.join(ws, '.rehearsal'),
      path.join(ws, '.rehearsal', 'runs'),
      path.join(ws, '.rehearsal', 'runs') + path.sep,
    ]) {
      assert.deepEqual(await resolveTraceArgument(arg), [shadowFile, imagineFile], arg);
    }
    assert.deepEqual(await findRunTraces(ws), [shadowFile, imagineFile]);
  });

  it('says what it expected when nothing is there', async () => {
    await assert.rejects(
      resolveTraceArgument(path.join(tmp(), 'nope')),
      (err: unknown) =>
        isCoded('TRACE_NOT_FOUND')(err) && /no such file or folder/.test((err as Error).message),
    );
    const empty = path.join(tmp(), 'empty');
    await fs.mkdir(empty);
    await assert.rejects(
      resolveTraceArgument(empty),
      (err: unknown) =>
        isCoded('TRACE_NOT_FOUND')(err) && /holds no trace/.test((err as Error).message),
    );
    assert.deepEqual(await findRunTraces(empty), []);
  });
});
