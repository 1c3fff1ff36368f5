import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { sampleAfterRun } from '../../builders/samples';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import type { RunSummary } from '../../../src/core/runner/runner';
import type { CompareRunsPanel } from '../../../src/extension/features/traces/compareRunsPanel';
import type { RunSummaryPanel } from '../../../src/extension/features/traces/runSummaryPanel';
import {
  closeAllEditors,
  row,
  studio,
  traceFile,
  waitForLibrary,
  waitUntil,
  workspaceFolder,
} from './helpers';

describe('Run summary', () => {
  beforeEach(closeAllEditors);
  after(closeAllEditors);

  it('a run of BFCL-v4 tasks shows BFCL accuracy per category, from the bfcl check of each episode', async function () {
    this.timeout(120_000);
    const api = await studio();
    // The example record, run from the editor with its ground truth (the reference policy).
    const folder = path.join(workspaceFolder(), 'bfcl');
    await fs.mkdir(folder, { recursive: true });
    const task = path.join(folder, 'multi_turn_base_0.task.json');
    await fs.copyFile(
      path.join(
        __dirname,
        '..',
        '..',
        '..',
        '..',
        'examples',
        'tasks',
        'multi_turn_base_0.task.json',
      ),
      task,
    );
    await vscode.commands.executeCommand('rehearsal.selectPolicy', { kind: 'reference' });
    const summary = await vscode.commands.executeCommand<RunSummary>(
      'rehearsal.runTask',
      vscode.Uri.file(task),
    );
    assert.equal(summary?.status, 'completed', JSON.stringify(summary?.error));
    const file = path.join(workspaceFolder(), '.rehearsal', 'runs', summary.runId, 'trace.jsonl');
    await waitForLibrary(api, 'the BFCL run indexed', async () => {
      assert.ok(api.services.library.index(file)?.runEnd, 'the run is indexed to its end');
    });
    const panel = await vscode.commands.executeCommand<RunSummaryPanel>(
      'rehearsal.showRunSummary',
      { file },
    );
    await waitUntil(
      [panel.onDidPost],
      'the snapshot with BFCL accuracy',
      () => assert.ok(panel.lastPosted?.bfcl),
      30_000,
    );
    assert.deepEqual(panel.lastPosted!.bfcl, {
      categories: [
        { category: 'multi_turn_base', graded: 1, passed: 1, accuracy: 1, notEvaluated: 0 },
      ],
      overall: 1,
      otherEpisodes: 0,
    });
  });

  it("opens from a run's row: the run's metrics, fidelity per tool, and a drawn row per episode", async () => {
    const api = await studio();
    const run = await row(api, SAMPLE_RUN_IDS.shadow);
    const panel = await vscode.commands.executeCommand<RunSummaryPanel>(
      'rehearsal.showRunSummary',
      run.node,
    );
    assert.equal(panel.panel.viewType, 'rehearsal.runSummary');
    await waitUntil([panel.onDidPost], 'the snapshot', () => assert.ok(panel.lastPosted), 20_000);
    const s = panel.lastPosted!;
    assert.equal(s.file, traceFile(SAMPLE_RUN_IDS.shadow));
    assert.deepEqual(
      [
        s.metrics.episodes,
        s.metrics.successes,
        s.metrics.graded,
        s.metrics.calls,
        s.metrics.rehearsalParseValid,
      ],
      [3, 1, 3, 7, 6],
    );
    assert.deepEqual(
      s.perTool.map((t) => t.tool),
      ['cancel_pending_order', 'find_user_id_by_email', 'get_order_details'],
    );
    await waitUntil(
      [panel.onDidRender],
      'the rows drawn',
      () => assert.deepEqual([panel.lastRendered?.rows, panel.lastRendered?.total], [3, 3]),
      20_000,
    );
    // The same panel again, not a second one.
    assert.equal(
      await vscode.commands.executeCommand<RunSummaryPanel>('rehearsal.showRunSummary', {
        file: s.file,
      }),
      panel,
    );
  });
});

describe('Compare runs', () => {
  beforeEach(closeAllEditors);
  after(closeAllEditors);

  it('puts two runs of the same tasks side by side: per task, and the calls whose rehearsal scored differently, regressions first', async () => {
    const api = await studio();
    const file = path.join(
      workspaceFolder(),
      '.rehearsal',
      'runs',
      '20261202-120000-shadow-after',
      'trace.jsonl',
    );
    await sampleAfterRun().write(file);
    await vscode.commands.executeCommand('rehearsal.refreshTraces');
    await waitForLibrary(api, 'the second run', async () => {
      await row(api, '20261202-120000-shadow-after');
    });
    const panel = await vscode.commands.executeCommand<CompareRunsPanel>(
      'rehearsal.compareRuns',
      { file: traceFile(SAMPLE_RUN_IDS.shadow) },
      { file },
    );
    assert.equal(panel.panel.viewType, 'rehearsal.compareRuns');
    await waitUntil([panel.onDidPost], 'the comparison', () => assert.ok(panel.lastPosted), 20_000);
    const c = panel.lastPosted!;
    assert.equal(c.b.policy, 'model folder checkpoints/after on cpu');
    assert.deepEqual(
      c.tasks.find((t) => t.taskId === 'retail-test-0007') && [
        c.tasks[0].a?.successes,
        c.tasks[0].b?.successes,
      ],
      [0, 1],
    );
    // Regressions first, with each score's change (issue 27: only exact/not-exact flips were shown).
    assert.deepEqual(
      c.pairs.map((p) => [p.tool, p.a.verdict, p.b.verdict, p.regression]),
      [
        ['find_user_id_by_email', 'right', 'wrong', true],
        ['get_order_details', 'wrong', 'right', false],
      ],
    );
    assert.ok((c.pairs[0].change.fieldF1 ?? 0) < 0 && (c.pairs[1].change.fieldF1 ?? 0) > 0);
    assert.equal(c.tasks.find((t) => t.taskId === 'retail-test-0007')?.b?.episodeId, 'e1');
    await waitUntil(
      [panel.onDidRender],
      'the tables drawn',
      () => assert.deepEqual([panel.lastRendered?.tasks, panel.lastRendered?.pairs], [3, 2]),
      20_000,
    );
  });
});
