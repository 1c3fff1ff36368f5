import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import type { TrajectoryPanel } from '../../../src/extension/features/traces/trajectoryPanel';
import { closeAllEditors, rowAt, studio, traceFile, waitUntil } from './helpers';

describe('Trajectory panel', () => {
  beforeEach(closeAllEditors);
  after(closeAllEditors);

  it('opens an episode from its tree node, and its webview asks for the snapshot (ready handshake)', async () => {
    const api = await studio();
    const episode = await rowAt(api, [SAMPLE_RUN_IDS.shadow, 'e1 retail-test-0007']);
    const panel = await vscode.commands.executeCommand<TrajectoryPanel>(
      'rehearsal.openTrajectory',
      episode.node,
    );
    assert.equal(panel.panel.viewType, 'rehearsal.trajectory');
    assert.equal(panel.panel.webview.options.enableScripts, true);
    assert.equal(panel.panel.options.retainContextWhenHidden, false);
    // Only a loaded webview sends `ready`; the host posts nothing before it.
    await waitUntil(
      [panel.onDidPost],
      'the first snapshot',
      () => assert.ok(panel.lastPosted),
      20_000,
    );
    const snapshot = panel.lastPosted!.snapshot;
    assert.equal(snapshot.file, traceFile(SAMPLE_RUN_IDS.shadow));
    assert.equal(snapshot.episode.episodeId, 'e1');
    assert.deepEqual(
      snapshot.turns.map((t) => t.calls.map((c) => c.badge.text)),
      [['exact'], ['F1 0.78'], ['F1 0.00 · error state differs'], []],
    );
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    assert.ok(tab?.input instanceof vscode.TabInputWebview, 'the active tab is the panel');
    assert.equal(tab.label, `Trajectory e1 · ${SAMPLE_RUN_IDS.shadow}`);
  });

  it('reuses the panel of an episode and follows the call it was opened for', async () => {
    await studio();
    const file = traceFile(SAMPLE_RUN_IDS.shadow);
    const a = await vscode.commands.executeCommand<TrajectoryPanel>('rehearsal.openTrajectory', {
      file,
      episodeId: 'e2',
    });
    await waitUntil([a.onDidPost], 'the first snapshot', () => assert.ok(a.lastPosted), 20_000);
    const b = await vscode.commands.executeCommand<TrajectoryPanel>('rehearsal.openTrajectory', {
      file,
      episodeId: 'e2',
      callId: 'e2.t3.c1',
    });
    assert.equal(a, b);
    await waitUntil([b.onDidPost], 'a snapshot focused on the call', () =>
      assert.equal(b.lastPosted?.snapshot.focusCallId, 'e2.t3.c1'),
    );
  });
});
