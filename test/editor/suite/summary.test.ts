import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import type { RunSummaryPanel } from '../../../src/extension/runSummaryPanel';
import { closeAllEditors, row, studio, traceFile, waitUntil } from './helpers';

describe('Run summary', () => {
  beforeEach(closeAllEditors);
  after(closeAllEditors);

  it('opens from a run\'s row: the run\'s metrics, fidelity per tool, and a drawn row per episode', async () => {
    const api = await studio();
    const run = await row(api, SAMPLE_RUN_IDS.shadow);
    const panel = await vscode.commands.executeCommand<RunSummaryPanel>('rehearsal.showRunSummary', run.node);
    assert.equal(panel.panel.viewType, 'rehearsal.runSummary');
    await waitUntil([panel.onDidPost], 'the snapshot', () => assert.ok(panel.lastPosted), 20_000);
    const s = panel.lastPosted!;
    assert.equal(s.file, traceFile(SAMPLE_RUN_IDS.shadow));
    assert.deepEqual([s.metrics.episodes, s.metrics.successes, s.metrics.graded, s.metrics.calls, s.metrics.rehearsalParseValid], [3, 1, 3, 7, 6]);
    assert.deepEqual(s.perTool.map((t) => t.tool), ['cancel_pending_order', 'find_user_id_by_email', 'get_order_details']);
    await waitUntil([panel.onDidRender], 'the rows drawn', () => assert.deepEqual([panel.lastRendered?.rows, panel.lastRendered?.total], [3, 3]), 20_000);
    // The same panel again, not a second one.
    assert.equal(await vscode.commands.executeCommand<RunSummaryPanel>('rehearsal.showRunSummary', { file: s.file }), panel);
  });
});
