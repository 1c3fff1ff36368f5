import * as assert from 'node:assert/strict';
import { AnnotationSet } from '../../src/core/annotations/annotationSet';
import {
  annotationTreeChildren,
  annotationTreeParent,
  compareCallIds,
} from '../../src/core/annotations/tree';

describe('Annotations view model', () => {
  const set = new AnnotationSet();
  set.apply({
    v: 1,
    type: 'mark',
    ts: '2026-11-29T12:00:00Z',
    id: 'a1',
    author: 'ana',
    callId: 'e2.t10.c1',
    tool: 'get_order_details',
    kind: 'stale_state',
    severity: 'critical',
    note: 'ignores the cancellation',
  });
  set.apply({
    v: 1,
    type: 'mark',
    ts: '2026-11-29T12:01:00Z',
    id: 'a2',
    author: 'ana',
    callId: 'e2.t9.c1',
    tool: 'get_order_details',
    kind: 'hallucinated_value',
    severity: 'major',
    path: '$.status',
  });
  set.apply({
    v: 1,
    type: 'accept',
    ts: '2026-11-29T12:02:00Z',
    id: 'a3',
    author: 'bo',
    callId: 'e1.t1.c1',
    tool: 'find_user_id_by_email',
  });
  set.apply({
    v: 1,
    type: 'edit',
    ts: '2026-11-29T12:03:00Z',
    id: 'a2',
    author: 'bo',
    changes: { note: 'said pending' },
  });
  const empty = new AnnotationSet();
  const runs = [
    { file: '/w/runs/r2/trace.jsonl', runId: 'r2', set },
    { file: '/w/runs/r1/trace.jsonl', runId: 'r1', set: empty },
  ];

  it('lists runs with annotations and what they add up to', () => {
    assert.deepEqual(
      annotationTreeChildren(runs).map((n) => [n.label, n.description]),
      [['r2', '2 errors · 1 accepted']],
    );
  });

  it("lists a run's annotations in call order, with kind, call, path, severity and note", () => {
    const [run] = annotationTreeChildren(runs);
    const children = annotationTreeChildren(runs, run);
    assert.deepEqual(
      children.map((n) => [n.label, n.description]),
      [
        ['acceptable rehearsal', 'find_user_id_by_email e1.t1.c1'],
        ['hallucinated value', 'get_order_details e2.t9.c1 · $.status · major · “said pending”'],
        ['stale state', 'get_order_details e2.t10.c1 · critical · “ignores the cancellation”'],
      ],
    );
    assert.match(
      children[1].tooltip,
      /by ana at 2026-11-29T12:01:00Z; changed by bo at 2026-11-29T12:03:00Z/,
    );
    for (const c of children) assert.equal(annotationTreeParent(runs, c)?.id, run.id);
    assert.equal(annotationTreeParent(runs, run), undefined);
  });

  it('orders call ids with numbers as numbers', () => {
    assert.deepEqual(['e2.t10.c1', 'e10.t1.c1', 'e2.t9.c1', 'e1.t1.c2'].sort(compareCallIds), [
      'e1.t1.c2',
      'e2.t9.c1',
      'e2.t10.c1',
      'e10.t1.c1',
    ]);
  });
});
