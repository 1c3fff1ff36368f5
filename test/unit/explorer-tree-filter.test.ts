import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { AnnotationSet } from '../../src/core/annotations/annotationSet';
import { TraceLibrary } from '../../src/core/trace/index/library';
import type { TraceTreeNode, TreeOptions } from '../../src/core/explorer/tree';
import { callTreeNode, traceTreeChildren, traceTreeParent } from '../../src/core/explorer/tree';
import {
  describeTreeState,
  fidelityRank,
  isFilterActive,
} from '../../src/core/explorer/treeFilter';
import { sampleImagineRun, sampleShadowRun } from '../builders/samples';
import { useTempDir } from '../support/tempDir';

/** Every node under the root as `indent label | description`, the way the view renders it. */
function outline(library: TraceLibrary, options: TreeOptions): string[] {
  const out: string[] = [];
  const walk = (node: TraceTreeNode | undefined, depth: number) => {
    for (const c of traceTreeChildren(library, node, options)) {
      out.push(`${'  '.repeat(depth)}${c.label} | ${c.description}`);
      walk(c, depth + 1);
    }
  };
  walk(undefined, 0);
  return out;
}

describe('Trace Explorer filters, search and sort', () => {
  const tmp = useTempDir();
  let library: TraceLibrary;
  let shadow: string;
  let annotations: AnnotationSet;
  beforeEach(async () => {
    shadow = path.join(tmp(), 'shadow', 'trace.jsonl');
    await sampleShadowRun('shadow-run').write(shadow);
    await sampleImagineRun('imagine-run').write(path.join(tmp(), 'imagine', 'trace.jsonl'));
    library = new TraceLibrary();
    await library.setFiles([shadow, path.join(tmp(), 'imagine', 'trace.jsonl')]);
    annotations = new AnnotationSet();
    annotations.apply({
      v: 1,
      type: 'mark',
      ts: 't',
      id: 'a1',
      author: 'ana',
      callId: 'e1.t2.c1',
      kind: 'stale_state',
      severity: 'major',
      path: '$.status',
      note: 'ignores the delivery',
    });
    annotations.apply({
      v: 1,
      type: 'accept',
      ts: 't',
      id: 'a2',
      author: 'ana',
      callId: 'e2.t1.c1',
    });
  });
  afterEach(() => library.dispose());
  const withAnnotations = (o: TreeOptions = {}): TreeOptions => ({
    ...o,
    annotations: (f) => (f === shadow ? annotations : undefined),
  });

  it('shows only mismatched calls, with their episodes and turns, and hides runs without any', () => {
    assert.deepEqual(outline(library, { filter: { mismatches: true } }), [
      'shadow-run | 1/3 success · models/default',
      '  e1 retail-test-0007 | failure · reward 0.50',
      '    turn 2 | get_order_details · F1 0.78',
      '      get_order_details | F1 0.78',
      '    turn 3 | cancel_pending_order · F1 0.00 · error state differs',
      '      cancel_pending_order | F1 0.00 · error state differs',
      '  e3 retail-test-0031 | failed (TOOL_TIMEOUT)',
      '    turn 1 | find_user_id_by_email · F1 0.00 · error state differs',
      '      find_user_id_by_email | F1 0.00 · error state differs',
    ]);
  });

  it('shows rehearsal and act parse errors', () => {
    assert.deepEqual(outline(library, { filter: { parseErrors: true } }), [
      'shadow-run | 1/3 success · models/default',
      '  e2 retail-test-0012 | success · reward 1.00',
      '    turn 2 | parse error JSON_DECODE_ERROR',
      '    turn 3 | get_order_details · parse error NO_EXECUTION_RESULT_TAG_FOUND',
      '      get_order_details | parse error NO_EXECUTION_RESULT_TAG_FOUND',
    ]);
  });

  it('shows only annotated calls, with a badge for errors and for accepted rehearsals', () => {
    assert.deepEqual(outline(library, withAnnotations({ filter: { annotated: true } })), [
      'shadow-run | 1/3 success · models/default',
      '  e1 retail-test-0007 | failure · reward 0.50',
      '    turn 2 | get_order_details · F1 0.78',
      '      get_order_details | ⚑ 1 · F1 0.78',
      '  e2 retail-test-0012 | success · reward 1.00',
      '    turn 1 | get_order_details · exact',
      '      get_order_details | ✓ accepted · exact',
    ]);
    const node = callTreeNode(library, shadow, 'e1.t2.c1', withAnnotations())!;
    assert.deepEqual(node.annotations, { errors: 1, accepted: false });
    assert.match(
      node.tooltip,
      /⚑ stale state \(major\) at \$\.status: ignores the delivery \(ana\)/,
    );
  });

  it('filters by tool and combines criteria with "and"', () => {
    const calls = (o: TreeOptions) =>
      outline(library, o)
        .filter((l) => l.startsWith('      '))
        .map((l) => l.trim());
    assert.deepEqual(calls({ filter: { tools: ['cancel_pending_order'] } }), [
      'cancel_pending_order | F1 0.00 · error state differs',
    ]);
    assert.deepEqual(calls({ filter: { tools: ['get_order_details'], mismatches: true } }), [
      'get_order_details | F1 0.78',
    ]);
    assert.deepEqual(
      calls({
        filter: { tools: ['get_order_details', 'find_user_id_by_email'], mismatches: true },
      }),
      ['get_order_details | F1 0.78', 'find_user_id_by_email | F1 0.00 · error state differs'],
    );
  });

  it('searches tool names, task ids, error codes, final answers and annotation notes, ignoring case', () => {
    const calls = (text: string, o: TreeOptions = {}) =>
      outline(library, { ...o, filter: { text } }).map((l) => l.trim());
    assert.ok(
      calls('CANCEL_pending').includes('cancel_pending_order | F1 0.00 · error state differs'),
    );
    assert.deepEqual(
      calls('timeout').filter(
        (l) => l.includes('|') && !l.startsWith('e') && !l.startsWith('turn') && !l.includes('run'),
      ),
      ['find_user_id_by_email | tool error TOOL_TIMEOUT'],
    );
    assert.ok(
      calls('retail-train-0101').some((l) => l.startsWith('imagine-run')),
      'a task id selects its episode',
    );
    assert.ok(
      calls('already delivered').includes(
        'turn 4 | final answer: Your order #W2611340 was already delivered, so it cannot be cancelled. I can hel',
      ),
    );
    assert.deepEqual(
      calls('the delivery', withAnnotations()).filter((l) => l.startsWith('get_')),
      ['get_order_details | ⚑ 1 · F1 0.78'],
    );
    assert.deepEqual(calls('no such thing'), []);
  });

  it('sorts by fidelity: the calls of each run flat, least faithful first, each knowing its parent', () => {
    const options: TreeOptions = { sort: 'fidelity' };
    const run = traceTreeChildren(library, undefined, options).find(
      (n) => n.label === 'shadow-run',
    )!;
    const calls = traceTreeChildren(library, run, options);
    assert.deepEqual(
      calls.map((c) => `${c.label} | ${c.description}`),
      [
        'get_order_details | parse error NO_EXECUTION_RESULT_TAG_FOUND · e2.t3.c1',
        'find_user_id_by_email | tool error TOOL_TIMEOUT · e3.t2.c1',
        'cancel_pending_order | F1 0.00 · error state differs · e1.t3.c1',
        'find_user_id_by_email | F1 0.00 · error state differs · e3.t1.c1',
        'get_order_details | F1 0.78 · e1.t2.c1',
        'find_user_id_by_email | exact · e1.t1.c1',
        'get_order_details | exact · e2.t1.c1',
      ],
    );
    for (const c of calls) assert.equal(traceTreeParent(library, c, options)?.id, run.id);
    assert.equal(
      callTreeNode(library, shadow, 'e1.t2.c1', options)?.description,
      'F1 0.78 · e1.t2.c1',
    );
    const filtered = traceTreeChildren(library, run, {
      sort: 'fidelity',
      filter: { mismatches: true },
    });
    assert.equal(filtered.length, 3);
    // Unfiltered, calls are ranked from their outcomes alone; a filter that keeps every call ranks
    // them from their summaries: the same order.
    const everyTool = traceTreeChildren(library, run, {
      sort: 'fidelity',
      filter: { tools: ['get_order_details', 'find_user_id_by_email', 'cancel_pending_order'] },
    });
    assert.deepEqual(
      everyTool.map((c) => c.id),
      calls.map((c) => c.id),
    );
  });

  it('describes the filter and the order in words', () => {
    assert.equal(isFilterActive({}), false);
    assert.equal(isFilterActive({ text: '  ' }), false);
    assert.equal(isFilterActive({ tools: [] }), false);
    assert.equal(isFilterActive({ annotated: true }), true);
    assert.equal(describeTreeState({}), '');
    assert.equal(
      describeTreeState({ mismatches: true, tools: ['a'], text: ' pending ' }, 'fidelity'),
      'mismatches · tool a · "pending" · least faithful first',
    );
    assert.equal(
      describeTreeState({ annotated: true, parseErrors: true, tools: ['a', 'b'] }),
      'annotated · parse errors · tools a, b',
    );
  });

  it('ranks rehearsal parse errors, then tool errors, then by field F1, exact and unscored last', () => {
    const base = { callId: 'c', turnId: 't', episodeId: 'e', tool: 'x', index: 0 };
    const s = (fieldF1: number, exactMatch = false) => ({
      exactMatch,
      fieldF1,
      keyJaccard: 1,
      typeAgreement: 1,
      errorAgreement: true,
    });
    const ranks = [
      fidelityRank({ ...base, rehearsalError: 'E' }),
      fidelityRank({ ...base, actualError: 'T' }),
      fidelityRank({ ...base, scores: s(0.2) }),
      fidelityRank({ ...base, scores: s(0.9) }),
      fidelityRank({ ...base, scores: s(1, true) }),
      fidelityRank({}), // no outcome yet
    ];
    assert.deepEqual(
      [...ranks].sort((a, b) => a - b),
      ranks,
    );
  });
});
