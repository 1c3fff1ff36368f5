import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { AnnotationSet } from '../../src/core/annotations/annotationSet';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import { loadTrajectory } from '../../src/core/trajectory/snapshot';
import type { StudioError } from '../../src/core/base/errors';
import { sampleShadowRun } from '../builders/samples';
import { PRIVATE_RUN_OUTCOMES, recordPrivateRun } from '../builders/privateRun';
import { useTempDir } from '../support/tempDir';

describe('Trajectory snapshot', () => {
  const tmp = useTempDir();
  let n = 0;
  const index = async () => {
    const file = path.join(tmp(), `trace-${n++}.jsonl`);
    await sampleShadowRun('traj-run').write(file);
    return TraceIndex.build(file);
  };

  it('shows an episode as its turns, each with the user message before it, the act and its calls', async () => {
    const snap = await loadTrajectory(await index(), 'e1');
    assert.equal(snap.runId, 'traj-run');
    assert.equal(snap.episode.taskId, 'retail-test-0007');
    assert.equal(snap.episode.description, 'failure · reward 0.50');
    assert.deepEqual(
      snap.episode.checks.map((c) => [c.id, c.passed]),
      [
        ['order-not-cancelled', true],
        ['offers-return', false],
      ],
    );
    assert.match(snap.episode.instruction ?? '', /Cancel my order #W2611340/);
    assert.deepEqual(
      snap.turns.map((t) => [t.turnId, t.parse.kind, t.calls.map((c) => c.tool)]),
      [
        ['e1.t1', 'calls', ['find_user_id_by_email']],
        ['e1.t2', 'calls', ['get_order_details']],
        ['e1.t3', 'calls', ['cancel_pending_order']],
        ['e1.t4', 'final', []],
      ],
    );
    assert.match(snap.turns[0].user ?? '', /My email is mia\.garcia@example\.com/);
    assert.match(snap.turns[0].text, /Let me find your account\./);
    assert.equal(snap.kinds.length, 8);
    assert.deepEqual(snap.severities, ['minor', 'major', 'critical']);
  });

  it('a committed episode of private rehearsal carries the memory it read, line by line with its attempts; others none', async () => {
    const summary = await recordPrivateRun(tmp(), 'private-traj');
    const traced = await TraceIndex.build(summary.traceFile);
    const committed = await loadTrajectory(traced, 'e4');
    assert.equal(committed.episode.role, 'committed');
    assert.equal(committed.memory?.text, PRIVATE_RUN_OUTCOMES);
    assert.deepEqual(
      committed.memory?.lines.map((l) => [l.attempts, l.calls.map((c) => c.callId)]),
      [
        [
          [1, 2],
          ['e1.t2.c1', 'e2.t2.c1'],
        ],
        [[3], []],
      ],
    );
    assert.equal((await loadTrajectory(traced, 'e1')).memory, undefined);
    assert.equal((await loadTrajectory(await index(), 'e1')).memory, undefined);
  });

  it('gives each call both sides with the differing lines, the diff with suggested kinds, and its scores', async () => {
    const snap = await loadTrajectory(await index(), 'e1');
    const call = snap.turns[1].calls[0];
    assert.equal(call.callId, 'e1.t2.c1');
    assert.equal(call.badge.text, 'F1 0.78');
    assert.equal(call.scores?.exactMatch, false);
    assert.deepEqual(
      call.diff.map((d) => [d.path, d.kind, d.suggestedKind, d.rehearsal, d.actual]),
      [
        [
          '$.fulfillments',
          'added',
          'missing_field',
          undefined,
          '[{"item_ids":["6777246137","4648362606"],"tracking_id":["357962501027"]}]',
        ],
        ['$.status', 'changed', 'hallucinated_value', '"pending"', '"delivered"'],
      ],
    );
    const lineText = (side: 'rehearsal' | 'actual', kind: string) =>
      call[side].lines
        .filter((l) => l.kind === kind)
        .map((l) => call[side].text.split('\n')[l.line].trim());
    assert.deepEqual(lineText('rehearsal', 'changed'), ['"status": "pending",']);
    assert.deepEqual(lineText('actual', 'changed'), ['"status": "delivered",']);
    assert.equal(lineText('actual', 'added')[0], '"fulfillments": [');
    // Only the line where the path starts is its first; the rest of the value is its body.
    const added = call.actual.lines.filter((l) => l.kind === 'added');
    assert.deepEqual(
      added.filter((l) => l.first).map((l) => call.actual.text.split('\n')[l.line].trim()),
      ['"fulfillments": ['],
    );
    assert.ok(added.filter((l) => !l.first).length >= 8, "the fulfillments' body lines");
    assert.match(call.arguments, /"order_id": "#W2611340"/);
    assert.deepEqual(
      call.latency,
      { rehearsalMs: 90, actualMs: 4 },
      "each side's time, for the timeline's bars",
    );
    const cancel = snap.turns[2].calls[0];
    assert.equal(
      cancel.suggestedKind,
      'wrong_error_state',
      'an error state that differs suggests that kind',
    );
  });

  it('word-diffs text answers, says why calls were not compared, and attaches annotations', async () => {
    const annotations = new AnnotationSet();
    annotations.apply({
      v: 1,
      type: 'mark',
      ts: 't',
      id: 'a1',
      author: 'ana',
      callId: 'e3.t1.c1',
      kind: 'wrong_error_state',
      severity: 'critical',
    });
    const snap = await loadTrajectory(await index(), 'e3', annotations);
    const text = snap.turns[0].calls[0];
    assert.ok(
      text.actual.words?.some((w) => w.changed && w.value.includes('Error')),
      JSON.stringify(text.actual.words),
    );
    assert.deepEqual(
      text.annotations.map((a) => a.id),
      ['a1'],
    );
    const timeout = snap.turns[1].calls[0];
    assert.equal(timeout.notCompared, 'the tool gave no response');
    assert.equal(timeout.scores, undefined);
    assert.equal(snap.episode.error?.code, 'TOOL_TIMEOUT');
    const e2 = await loadTrajectory(await index(), 'e2');
    assert.deepEqual(e2.turns[1].parse, {
      kind: 'error',
      code: 'JSON_DECODE_ERROR',
      message: e2.turns[1].parse.kind === 'error' ? e2.turns[1].parse.message : '',
    });
    assert.equal(e2.turns[2].calls[0].notCompared, 'the rehearsal did not parse');
    assert.equal(e2.turns[2].calls[0].suggestedKind, 'format_error');
  });

  it('says so for an episode the trace does not have', async () => {
    await assert.rejects(
      loadTrajectory(await index(), 'e9'),
      (e: StudioError) => e.code === 'UNKNOWN_EPISODE',
    );
  });
});
