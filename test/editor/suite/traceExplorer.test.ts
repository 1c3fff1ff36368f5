import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { runIdShort } from '../../../src/core/trace/format/ids';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import { outline, row, rowAt, rows, studio, traceFile } from './helpers';

const SHADOW = SAMPLE_RUN_IDS.shadow;

describe('Trace Explorer', () => {
  it('lists the runs, newest first, with mode, policy and episode count', async () => {
    const api = await studio();
    // Other tests add runs of their own; these are the fixture's.
    const samples: string[] = Object.values(SAMPLE_RUN_IDS).map(runIdShort);
    const runs = (await rows(api)).filter((r) => samples.includes(r.label));
    assert.deepEqual(
      runs.map((r) => [r.label, r.description]),
      [
        ['shadow-crashed', '1/3 success · models/default · 1 skipped line · 2026-11-29 13:00'],
        ['shadow-sample', '1/3 success · models/default · 2026-11-29 12:00'],
        ['imagine-sample', '1/1 success · models/default · 2026-11-29 11:30'],
      ],
      (await outline(api)).join('\n'),
    );
    const shadow = runs[1];
    assert.equal(shadow.item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
    assert.equal(shadow.item.contextValue, 'rehearsal.run');
    // The icon follows the outcome: 1 of 3 successes and an episode that failed to play is not a green check.
    assert.equal(shadow.icon, 'error');
    assert.equal(runs[2].icon, 'pass', 'a run whose every episode succeeded');
    assert.equal(shadow.item.resourceUri?.fsPath, traceFile(SHADOW));
  });

  it('shows the episodes of a run with their outcome', async () => {
    const api = await studio();
    const episodes = await rows(api, (await row(api, SHADOW)).node);
    assert.deepEqual(
      episodes.map((r) => [r.label, r.description, r.icon]),
      [
        ['e1 retail-test-0007', 'failure · reward 0.50', 'diff-modified'],
        ['e2 retail-test-0012', 'success · reward 1.00', 'pass'],
        ['e3 retail-test-0031', 'failed (TOOL_TIMEOUT)', 'error'],
      ],
    );
    assert.ok(
      episodes.every((e) => e.item.collapsibleState === vscode.TreeItemCollapsibleState.Collapsed),
    );
  });

  it('shows turns with their calls, act parse errors and final answers', async () => {
    const api = await studio();
    const turns = await rows(api, (await rowAt(api, [SHADOW, 'e2 retail-test-0012'])).node);
    assert.deepEqual(
      turns.map((r) => [r.label, r.description]),
      [
        ['turn 1', 'get_order_details · exact'],
        ['turn 2', 'parse error JSON_DECODE_ERROR'],
        ['turn 3', 'get_order_details · parse error NO_EXECUTION_RESULT_TAG_FOUND'],
        ['turn 4', 'final answer: It was delivered.'],
      ],
    );
    assert.equal(
      turns[1].item.collapsibleState,
      vscode.TreeItemCollapsibleState.None,
      'a turn without calls has nothing to expand',
    );
  });

  it('shows each call with its tool and fidelity badge, and opens its diff on click', async () => {
    const api = await studio();
    const expectations: [string[], string, string][] = [
      [['e1 retail-test-0007', 'turn 1'], 'exact', 'pass'],
      [['e1 retail-test-0007', 'turn 2'], 'F1 0.78', 'diff-modified'],
      [['e1 retail-test-0007', 'turn 3'], 'F1 0.00 · error state differs', 'diff-modified'],
      [['e2 retail-test-0012', 'turn 3'], 'parse error NO_EXECUTION_RESULT_TAG_FOUND', 'error'],
      [['e3 retail-test-0031', 'turn 2'], 'tool error TOOL_TIMEOUT', 'error'],
    ];
    for (const [path, badge, icon] of expectations) {
      const calls = await rows(api, (await rowAt(api, [SHADOW, ...path])).node);
      assert.equal(calls.length, 1, `${path.join(' > ')} should have one call`);
      assert.equal(calls[0].description, badge, `badge of the call under ${path.join(' > ')}`);
      assert.equal(calls[0].icon, icon, `icon of the call under ${path.join(' > ')}`);
    }
    const call = (
      await rows(api, (await rowAt(api, [SHADOW, 'e1 retail-test-0007', 'turn 2'])).node)
    )[0];
    assert.equal(call.label, 'get_order_details');
    assert.equal(call.item.contextValue, 'rehearsal.call');
    assert.equal(call.item.collapsibleState, vscode.TreeItemCollapsibleState.None);
    assert.deepEqual(call.item.command?.command, 'rehearsal.showCallDiff');
    assert.deepEqual(call.item.command?.arguments, [
      { file: traceFile(SHADOW), callId: 'e1.t2.c1' },
    ]);
    assert.match(String(call.item.tooltip), /field F1: 0\.78/);
  });

  it('knows the parent of every node, so that reveal works', async () => {
    const api = await studio();
    const path = [runIdShort(SHADOW), 'e1 retail-test-0007', 'turn 2', 'get_order_details'];
    let node = (await rowAt(api, path)).node;
    for (const expected of path.slice(0, -1).reverse()) {
      const parent = await api.services.explorer.getParent(node);
      assert.ok(parent, `no parent for ${node.label}`);
      assert.equal(parent.label, expected);
      node = parent;
    }
    assert.equal(await api.services.explorer.getParent(node), undefined);
  });

  it('shows the torn last line of a crashed run as a skipped line, not as a run still being written', async () => {
    const api = await studio();
    const torn = await row(api, SAMPLE_RUN_IDS.torn);
    assert.match(torn.description, /· 1 skipped line · 2026-11-29 13:00$/);
    assert.match(String(torn.item.tooltip), /line \d+: torn last line/);
    assert.notEqual(torn.icon, 'loading~spin', 'a crashed run must not spin as if it were running');
    // Everything before the torn line is still there.
    const episodes = await rows(api, torn.node);
    assert.deepEqual(
      episodes.map((e) => e.label),
      ['e1 retail-test-0007', 'e2 retail-test-0012', 'e3 retail-test-0031'],
    );
  });
});
