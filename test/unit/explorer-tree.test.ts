import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { findRunTraces } from '../../src/core/trace/format/discover';
import { TraceLibrary } from '../../src/core/trace/index/library';
import type { CallEntry } from '../../src/core/trace/index/entries';
import type { TraceTreeNode } from '../../src/core/explorer/tree';
import { callTreeNode, traceTreeChildren, traceTreeParent } from '../../src/core/explorer/tree';
import { fidelityBadge } from '../../src/core/fidelity/verdicts';
import { shownPolicyPath } from '../../src/core/trace/format/policyLabel';
import { successText } from '../../src/core/explorer/successText';
import { TraceBuilder } from '../builders/traceBuilder';
import { sampleImagineRun, sampleShadowRun } from '../builders/samples';
import { useTempDir } from '../support/tempDir';

const shape = (n: TraceTreeNode) => ({
  kind: n.kind,
  label: n.label,
  description: n.description,
  status: n.status,
  hasChildren: n.hasChildren,
});

describe('Trace Explorer tree model', () => {
  const tmp = useTempDir();
  let library: TraceLibrary;
  let shadow: string;
  beforeEach(async () => {
    const runs = path.join(tmp(), '.rehearsal', 'runs');
    shadow = path.join(runs, '20261129-120000-shadow-sample', 'trace.jsonl');
    await sampleShadowRun().write(shadow);
    await sampleImagineRun().write(
      path.join(runs, '20261129-113000-imagine-sample', 'trace.jsonl'),
    );
    library = new TraceLibrary();
    await library.setFiles(await findRunTraces(tmp()));
  });
  afterEach(() => library.dispose());

  const child = (node: TraceTreeNode | undefined, label: string) => {
    const found = traceTreeChildren(library, node).find((n) => n.label === label);
    assert.ok(found, `no child ${label} under ${node?.label ?? 'the root'}`);
    return found;
  };

  it("a run's icon follows its episodes: 0 of 2 successes is not a green check; a model inside the workspace shows relative to it", async () => {
    const file = path.join(tmp(), '.rehearsal', 'runs', 'r-failures', 'trace.jsonl');
    const trace = new TraceBuilder('r-failures', 'shadow', path.join(tmp(), 'models', 'mine'));
    for (const task of ['t1', 't2']) trace.episode(task).end({ success: false, reward: 0 });
    await trace.end().write(file);
    const good = path.join(tmp(), '.rehearsal', 'runs', 'r-good', 'trace.jsonl');
    const ok = new TraceBuilder('r-good', 'shadow', '/elsewhere/model');
    ok.episode('t1').end({ success: true, reward: 1 });
    await ok.end().write(good);
    await library.setFiles(await findRunTraces(tmp()));
    assert.deepEqual(shape(child(undefined, 'r-failures')), {
      kind: 'run',
      label: 'r-failures',
      description: 'shadow · 0/2 success · models/mine',
      status: 'mismatch',
      hasChildren: true,
    });
    assert.deepEqual(
      [child(undefined, 'r-good').description, child(undefined, 'r-good').status],
      ['shadow · 1/1 success · /elsewhere/model', 'ok'],
    );
  });

  it('counts success over the graded episodes and says how many ended ungraded, as the notification and the summary do (issue 27)', async () => {
    const file = path.join(tmp(), '.rehearsal', 'runs', 'r-mixed', 'trace.jsonl');
    const trace = new TraceBuilder('r-mixed', 'shadow', 'reference');
    trace.episode('t1').end({ success: true, reward: 1 });
    trace.episode('t2').end({ success: false, reward: 0.2 });
    trace.episode('t3').end({ success: null });
    trace.episode('t4').end({ status: 'failed', success: null });
    trace.episode('t5');
    await trace.end().write(file);
    await library.setFiles(await findRunTraces(tmp()));
    assert.equal(
      child(undefined, 'r-mixed').description,
      'shadow · 1/2 success · 2 ungraded · reference · 5 episodes',
    );
    assert.equal(successText(4, 8, 10), '4/8 success · 2 ungraded');
    assert.equal(successText(1, 1, 1), '1/1 success');
    assert.equal(successText(0, 0, 3), '3 ungraded');
  });

  it('shows one node per run, newest first', () => {
    assert.deepEqual(traceTreeChildren(library).map(shape), [
      {
        kind: 'run',
        // The id without its stamp; the mode is the label's first word; the date last (issue 27).
        label: 'shadow-sample',
        description: '1/3 success · models/default · 2026-11-29 12:00',
        status: 'error',
        hasChildren: true,
      },
      {
        kind: 'run',
        label: 'imagine-sample',
        description: '1/1 success · models/default · 2026-11-29 11:30',
        status: 'ok',
        hasChildren: true,
      },
    ]);
  });

  it('shows episodes with their grade', () => {
    const run = child(undefined, 'shadow-sample');
    assert.deepEqual(traceTreeChildren(library, run).map(shape), [
      {
        kind: 'episode',
        label: 'e1 retail-test-0007',
        description: 'failure · reward 0.50',
        status: 'mismatch',
        hasChildren: true,
      },
      {
        kind: 'episode',
        label: 'e2 retail-test-0012',
        description: 'success · reward 1.00',
        status: 'ok',
        hasChildren: true,
      },
      {
        kind: 'episode',
        label: 'e3 retail-test-0031',
        description: 'failed (TOOL_TIMEOUT)',
        status: 'error',
        hasChildren: true,
      },
    ]);
  });

  it('shows turns with their calls, parse errors and final answers', () => {
    const run = child(undefined, 'shadow-sample');
    assert.deepEqual(traceTreeChildren(library, child(run, 'e1 retail-test-0007')).map(shape), [
      {
        kind: 'turn',
        label: 'turn 1',
        description: 'find_user_id_by_email · exact',
        status: 'ok',
        hasChildren: true,
      },
      {
        kind: 'turn',
        label: 'turn 2',
        description: 'get_order_details · F1 0.78',
        status: 'mismatch',
        hasChildren: true,
      },
      {
        kind: 'turn',
        label: 'turn 3',
        description: 'cancel_pending_order · F1 0.00 · error state differs',
        status: 'mismatch',
        hasChildren: true,
      },
      {
        kind: 'turn',
        label: 'turn 4',
        description:
          'final answer: Your order #W2611340 was already delivered, so it cannot be cancelled. I can hel',
        status: 'info',
        hasChildren: false,
      },
    ]);
    assert.deepEqual(
      traceTreeChildren(library, child(run, 'e2 retail-test-0012')).map((n) => [
        n.description,
        n.status,
      ]),
      [
        ['get_order_details · exact', 'ok'],
        ['parse error JSON_DECODE_ERROR', 'error'],
        ['get_order_details · parse error NO_EXECUTION_RESULT_TAG_FOUND', 'error'],
        ['final answer: It was delivered.', 'info'],
      ],
    );
  });

  it('shows each call with its fidelity badge', () => {
    const run = child(undefined, 'shadow-sample');
    const calls = (episode: string, turn: string) =>
      traceTreeChildren(library, child(child(run, episode), turn)).map(shape);
    assert.deepEqual(calls('e1 retail-test-0007', 'turn 1'), [
      {
        kind: 'call',
        label: 'find_user_id_by_email',
        description: 'exact',
        status: 'ok',
        hasChildren: false,
      },
    ]);
    const mismatch = calls('e1 retail-test-0007', 'turn 2')[0];
    assert.equal(mismatch.status, 'mismatch');
    assert.match(mismatch.description, /^F1 0\.\d\d$/);
    assert.deepEqual(
      calls('e1 retail-test-0007', 'turn 3')[0].description,
      'F1 0.00 · error state differs',
    );
    assert.deepEqual(calls('e2 retail-test-0012', 'turn 3')[0], {
      kind: 'call',
      label: 'get_order_details',
      description: 'parse error NO_EXECUTION_RESULT_TAG_FOUND',
      status: 'error',
      hasChildren: false,
    });
    assert.deepEqual(
      calls('e3 retail-test-0031', 'turn 2')[0].description,
      'tool error TOOL_TIMEOUT',
    );
    const node = callTreeNode(library, shadow, 'e1.t2.c1')!;
    assert.equal(node.id, `${shadow}#e1.t2.c1`);
    assert.match(node.tooltip, /paths: 1 missing · 0 invented · 1 changed · 0 retyped/);
    assert.equal(callTreeNode(library, shadow, 'e9.t9.c9'), undefined);
  });

  it('finds the parent of every node, so that any node can be revealed', () => {
    const queue = traceTreeChildren(library);
    let checked = 0;
    for (const root of queue) assert.equal(traceTreeParent(library, root), undefined);
    while (queue.length) {
      const node = queue.shift()!;
      for (const c of traceTreeChildren(library, node)) {
        const parent = traceTreeParent(library, c);
        assert.equal(parent?.id, node.id, `parent of ${c.id}`);
        assert.deepEqual(parent, node);
        queue.push(c);
        checked++;
      }
    }
    assert.equal(checked, 4 + 10 + 7 + 2 /* imagine: episode, 2 turns */ + 1);
  });

  it('shows an unreadable trace as a problem node', async () => {
    const missing = path.join(tmp(), 'gone', 'trace.jsonl');
    await library.add(missing);
    const node = traceTreeChildren(library).find((n) => n.file === missing)!;
    assert.deepEqual(shape(node), {
      kind: 'problem',
      label: 'gone',
      description: 'unreadable',
      status: 'error',
      hasChildren: false,
    });
    assert.match(node.tooltip, /no such file/);
    assert.deepEqual(traceTreeChildren(library, node), []);
    assert.equal(traceTreeParent(library, node), undefined);
  });

  it('shows a run still being written, and one with skipped lines', async () => {
    const live = new TraceBuilder('live-run', 'shadow');
    const e = live.episode('task-1');
    e.turn('\n<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>').rehearse(0, { ok: 1 });
    const file = path.join(tmp(), 'live', 'trace.jsonl');
    await fs.mkdir(path.dirname(file));
    await fs.writeFile(file, live.text() + 'garbage\n');
    await library.add(file);
    const run = traceTreeChildren(library).find((n) => n.file === file)!;
    assert.equal(run.status, 'mismatch');
    assert.match(run.description, /1 skipped line$/);
    assert.match(run.tooltip, /line 5: not valid JSON/);
    const episode = traceTreeChildren(library, run)[0];
    assert.deepEqual([episode.description, episode.status], ['running', 'running']);
    const call = traceTreeChildren(library, traceTreeChildren(library, episode)[0])[0];
    assert.deepEqual([call.description, call.status], ['waiting for tool', 'pending']);
  });

  it('tells listeners which trace changed', async () => {
    const fired: (string | undefined)[] = [];
    library.onDidChange((f) => fired.push(f));
    await fs.appendFile(shadow, 'not json\n');
    await library.refresh(shadow);
    await library.refresh(shadow); // nothing new: no event
    library.remove(shadow);
    library.remove(shadow); // unknown now: no event
    assert.deepEqual(fired, [shadow, undefined]);
    assert.equal(library.files.length, 1);
  });
});

describe('fidelityBadge', () => {
  const base: CallEntry = {
    callId: 'e1.t1.c1',
    turnId: 'e1.t1',
    episodeId: 'e1',
    tool: 't',
    index: 0,
  };
  const at = { line: 1, offset: 0, length: 1 };
  const scores = {
    exactMatch: false,
    fieldF1: 0.456,
    keyJaccard: 1,
    typeAgreement: 1,
    errorAgreement: true,
  };

  it('says what is known of a call', () => {
    assert.deepEqual(fidelityBadge(base), { text: 'not rehearsed', status: 'pending' });
    assert.deepEqual(fidelityBadge({ ...base, rehearsal: at }), {
      text: 'waiting for tool',
      status: 'pending',
    });
    assert.deepEqual(fidelityBadge({ ...base, rehearsal: at, actual: at }), {
      text: 'not scored',
      status: 'info',
    });
    assert.deepEqual(fidelityBadge({ ...base, rehearsal: at, actual: at, comparable: 'none' }), {
      text: 'not comparable',
      status: 'info',
    });
    assert.deepEqual(fidelityBadge({ ...base, rehearsal: at, actual: at, scores }), {
      text: 'F1 0.46',
      status: 'mismatch',
    });
    assert.deepEqual(
      fidelityBadge({
        ...base,
        rehearsal: at,
        actual: at,
        scores: { ...scores, errorAgreement: false },
      }),
      { text: 'F1 0.46 · error state differs', status: 'mismatch' },
    );
    assert.deepEqual(
      fidelityBadge({
        ...base,
        rehearsal: at,
        actual: at,
        scores: { ...scores, exactMatch: true, fieldF1: 1 },
      }),
      { text: 'exact', status: 'ok' },
    );
  });

  it('puts errors first', () => {
    assert.deepEqual(
      fidelityBadge({
        ...base,
        rehearsal: at,
        rehearsalError: 'EMPTY_SIMULATOR_OUTPUT',
        actualError: 'TOOL_TIMEOUT',
      }),
      { text: 'parse error EMPTY_SIMULATOR_OUTPUT', status: 'error' },
    );
    assert.deepEqual(fidelityBadge({ ...base, rehearsal: at, actualError: 'TOOL_TIMEOUT' }), {
      text: 'tool error TOOL_TIMEOUT',
      status: 'error',
    });
  });
});

describe('shownPolicyPath', () => {
  it("shows an older installation's default policy as models/default, not its install path (issue 27)", () => {
    const old =
      '/root/.vscode-server/extensions/rehearsal-studio.rehearsal-studio-0.1.0-linux-x64/models/default';
    assert.equal(shownPolicyPath(old), 'models/default');
    assert.equal(
      shownPolicyPath(
        '/home/u/.vscode/extensions/rehearsal-studio.rehearsal-studio-0.2.3/models/default',
      ),
      'models/default',
    );
    // Another model folder that happens to be called default is shown as recorded.
    assert.equal(shownPolicyPath('/data/models/default'), '/data/models/default');
    assert.equal(
      shownPolicyPath('/x/rehearsal-studio.rehearsal-studio-0.1.0/models/other'),
      '/x/rehearsal-studio.rehearsal-studio-0.1.0/models/other',
    );
  });
});
