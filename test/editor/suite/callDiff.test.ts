import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { JsonValue } from '../../../src/core/base/json';
import type { CallActualEvent, CallRehearsalEvent } from '../../../src/core/trace/format/schema';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import { sampleShadowRun } from '../../builders/samples';
import {
  activeDiffTab,
  closeAllEditors,
  nextEvent,
  row,
  rowAt,
  rows,
  studio,
  traceFile,
  waitForLibrary,
  workspaceFolder,
} from './helpers';
import { LiveTrace } from './liveTrace';

const SHADOW = SAMPLE_RUN_IDS.shadow;
const sample = sampleShadowRun(SHADOW);

/** Pretty JSON with sorted keys, written independently of the studio's canonicalJson. */
function sortedJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sort(value), null, 2) + '\n';
}

function rehearsedValue(callId: string): JsonValue {
  const e = sample.events.find(
    (x): x is CallRehearsalEvent => x.type === 'call.rehearsal' && x.callId === callId,
  );
  assert.ok(e?.result.ok, `the sample has no parsed rehearsal for ${callId}`);
  return e.result.value;
}

function actualValue(callId: string): JsonValue {
  const e = sample.events.find(
    (x): x is CallActualEvent => x.type === 'call.actual' && x.callId === callId,
  );
  assert.ok(e?.response?.text, `the sample has no text answer for ${callId}`);
  return JSON.parse(e.response.text.join('')) as JsonValue;
}

async function text(uri: vscode.Uri): Promise<{ text: string; languageId: string }> {
  const doc = await vscode.workspace.openTextDocument(uri);
  return { text: doc.getText(), languageId: doc.languageId };
}

describe('Call diff', () => {
  beforeEach(closeAllEditors);
  after(closeAllEditors);

  it('opens the rehearsed (left) and actual (right) response of a call side by side', async () => {
    await studio();
    const file = traceFile(SHADOW);
    await vscode.commands.executeCommand('rehearsal.showCallDiff', { file, callId: 'e1.t2.c1' });
    const { tab, input } = activeDiffTab();
    assert.equal(tab.label, 'get_order_details e1.t2.c1: rehearsed ↔ actual');
    for (const [uri, side] of [
      [input.original, 'rehearsal'],
      [input.modified, 'actual'],
    ] as const) {
      assert.equal(uri.scheme, 'rehearsal-call');
      assert.equal(uri.path, `/e1.t2.c1/${side}.call.json`);
      assert.equal(uri.query, file);
    }
    const left = await text(input.original);
    const right = await text(input.modified);
    // Call documents have a JSON language of their own, so that CodeLenses show in their diff only.
    assert.equal(left.languageId, 'rehearsal-json');
    assert.equal(right.languageId, 'rehearsal-json');
    // Canonical JSON (sorted keys, 2-space indent) of each side, so that the diff shows only real differences.
    assert.equal(left.text, sortedJson(rehearsedValue('e1.t2.c1')));
    assert.equal(right.text, sortedJson(actualValue('e1.t2.c1')));
    assert.match(left.text, /"status": "pending"/);
    assert.match(right.text, /"status": "delivered"/);
    assert.match(right.text, /"fulfillments"/);
    const shown = vscode.window.visibleTextEditors.map((e) => e.document.uri.toString());
    assert.ok(
      shown.includes(input.original.toString()) && shown.includes(input.modified.toString()),
      `both sides should be visible: ${JSON.stringify(shown)}`,
    );
  });

  it('opens the same diff from a tree node, as the inline action of a call row does', async () => {
    const api = await studio();
    const call = (
      await rows(api, (await rowAt(api, [SHADOW, 'e2 retail-test-0012', 'turn 1'])).node)
    )[0];
    await vscode.commands.executeCommand('rehearsal.showCallDiff', call.node);
    const { tab, input } = activeDiffTab();
    assert.equal(tab.label, 'get_order_details e2.t1.c1: rehearsed ↔ actual');
    assert.equal(
      (await text(input.original)).text,
      (await text(input.modified)).text,
      'an exact rehearsal has identical sides',
    );
  });

  it('shows the raw rehearsal text and the error code when the rehearsal did not parse', async () => {
    await studio();
    await vscode.commands.executeCommand('rehearsal.showCallDiff', {
      file: traceFile(SHADOW),
      callId: 'e2.t3.c1',
    });
    const { input } = activeDiffTab();
    assert.equal(input.original.path, '/e2.t3.c1/rehearsal.call.txt');
    const left = await text(input.original);
    // Wrapped (issue 27: one long unwrapped line), and where it failed: the heading and an error.
    assert.equal(left.languageId, 'rehearsal-text');
    assert.equal(
      vscode.workspace
        .getConfiguration('editor', { uri: input.original, languageId: 'rehearsal-text' })
        .get('wordWrap'),
      'on',
    );
    // The diff editor takes its options from its modified side's language: the actual JSON's.
    for (const languageId of ['rehearsal-text', 'rehearsal-json'])
      assert.equal(
        vscode.workspace
          .getConfiguration('diffEditor', { uri: input.modified, languageId })
          .get('wordWrap'),
        'on',
        languageId,
      );
    assert.match(
      left.text,
      /^Rehearsal parse error NO_EXECUTION_RESULT_TAG_FOUND: .* \(raw output line 1, column 1\)\n/,
    );
    assert.match(
      left.text,
      /Raw rehearsal output:\nThe order was delivered; I will report it\.\n$/,
    );
    const diagnostics = vscode.languages.getDiagnostics(input.original);
    assert.equal(diagnostics.length, 1);
    assert.match(diagnostics[0].message, /^rehearsal parse error NO_EXECUTION_RESULT_TAG_FOUND: /);
    const doc = await vscode.workspace.openTextDocument(input.original);
    assert.equal(doc.offsetAt(diagnostics[0].range.start), left.text.indexOf('The order was'));
    assert.equal((await text(input.modified)).text, sortedJson(actualValue('e2.t3.c1')));
  });

  it('says why there is no actual response when the tool timed out', async () => {
    await studio();
    await vscode.commands.executeCommand('rehearsal.showCallDiff', {
      file: traceFile(SHADOW),
      callId: 'e3.t2.c1',
    });
    const { input } = activeDiffTab();
    assert.equal((await text(input.original)).text, sortedJson({ user_id: 'noah_kim_1180' }));
    assert.equal(
      (await text(input.modified)).text,
      'The tool gave no response: TOOL_TIMEOUT: find_user_id_by_email did not answer within 10000 ms\n',
    );
  });

  it('opens no diff for a call id the trace does not have', async () => {
    await studio();
    await vscode.commands.executeCommand('rehearsal.showCallDiff', {
      file: traceFile(SHADOW),
      callId: 'e9.t9.c9',
    });
    assert.equal(vscode.window.tabGroups.activeTabGroup.activeTab, undefined);
  });

  it('updates the actual side of an open diff when the tool answers', async () => {
    const api = await studio();
    const runId = '20261129-150000-shadow-diff-live';
    const file = path.join(workspaceFolder(), '.rehearsal', 'runs', runId, 'trace.jsonl');
    const live = await LiveTrace.open(file, runId);
    try {
      const turn = live.rehearsedCall('retail-test-0050', '#W5000050', {
        order_id: '#W5000050',
        status: 'pending',
      });
      await live.flush();
      await vscode.commands.executeCommand('rehearsal.refreshTraces');
      await waitForLibrary(api, 'the new run', async () => {
        await rowAt(api, [runId, 'e1 retail-test-0050', 'turn 1', 'get_order_details']);
      });
      await vscode.commands.executeCommand('rehearsal.showCallDiff', { file, callId: 'e1.t1.c1' });
      const { input } = activeDiffTab();
      assert.equal(
        (await text(input.modified)).text,
        'The tool has not answered this call (yet).\n',
      );

      const changed = nextEvent(
        vscode.workspace.onDidChangeTextDocument,
        (e) =>
          e.document.uri.toString() === input.modified.toString() &&
          e.document.getText().includes('shipped'),
        10_000,
        'the actual side to show the answer',
      );
      turn.actual(0, { json: { order_id: '#W5000050', status: 'shipped' } });
      await live.flush();
      const doc = (await changed).document;
      assert.equal(doc.getText(), sortedJson({ order_id: '#W5000050', status: 'shipped' }));
      await waitForLibrary(api, 'the fidelity badge of the answered call', async () => {
        assert.equal(
          (
            await row(
              api,
              'get_order_details',
              (await rowAt(api, [runId, 'e1 retail-test-0050', 'turn 1'])).node,
            )
          ).description,
          'F1 0.50',
        );
      });
    } finally {
      await live.close();
    }
  });
});
