import { buildBfclAccuracy } from '../../../core/report/bfclAccuracy';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunSummarySnapshot } from '../../../core/report/runSummary';
import { parseSummaryMessage, runSummary } from '../../../core/report/runSummary';
import { summaryProtocol } from '../../../core/report/summaryProtocol';
import type { ParamsOf } from '../../../core/base/panelProtocol';
import type { TraceLibrary } from '../../../core/trace/index/library';
import { SUMMARY_VIEW_TYPE } from '../../commands';
import { PanelCollection } from '../../panelCollection';
import { executeCommand } from '../../registerCommand';
import { SnapshotPanel, webviewPanelOptions } from '../../webviewPanel';

/**
 * A run's summary: its metrics at the top (success, reward, parse validity, rehearsal validity,
 * fidelity per tool, device) and a sortable, filterable table of its episodes, each row opening its
 * Trajectory. It follows a run being written.
 */
export class RunSummaryPanel extends SnapshotPanel<
  RunSummarySnapshot,
  ParamsOf<typeof summaryProtocol.rendered>
> {
  constructor(
    extensionUri: vscode.Uri,
    output: vscode.LogOutputChannel,
    private readonly library: TraceLibrary,
    readonly file: string,
  ) {
    const runId = library.index(file)?.run?.runId ?? path.basename(path.dirname(file));
    super(
      vscode.window.createWebviewPanel(
        SUMMARY_VIEW_TYPE,
        `Run ${runId}`,
        { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
        webviewPanelOptions(extensionUri),
      ),
      output,
      summaryProtocol,
      parseSummaryMessage,
    );
    this.setPage(extensionUri, {
      title: `Run ${runId}`,
      script: 'summary',
      style: 'summary',
    });
    this._register(
      library.onDidChange((changed) => {
        if (changed === undefined || changed === file) this.schedule();
      }),
    );
    this._register(
      this.connection.onRequest(summaryProtocol.openEpisode, async ({ episodeId, callId }) => {
        await executeCommand('rehearsal.openTrajectory', {
          file: this.file,
          episodeId,
          ...(callId ? { callId } : {}),
        });
      }),
    );
    this._register(this.panel.onDidDispose(() => this.dispose()));
  }

  protected async snapshot(): Promise<RunSummarySnapshot> {
    const summary = runSummary(await this.library.requireIndex(this.file));
    // A run of BFCL-v4 tasks (their ids are BFCL's records) also shows BFCL's accuracy per
    // category; the verdicts are read from the trace, only for such runs.
    if (!summary.episodes.taskIds.some((id) => id.startsWith('multi_turn_'))) return summary;
    const bfcl = await buildBfclAccuracy([this.file]);
    return bfcl.categories.length ? { ...summary, bfcl } : summary;
  }
}

/** The open run summaries, one per trace. */
export class RunSummaryPanels extends PanelCollection<RunSummaryPanel> {
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly output: vscode.LogOutputChannel,
    private readonly library: TraceLibrary,
  ) {
    super();
  }

  /** Shows a run's summary, reusing its panel. */
  show(file: string): RunSummaryPanel {
    return this.showPanel(
      file,
      (open) => open.panel.reveal(),
      () => new RunSummaryPanel(this.extensionUri, this.output, this.library, file),
    );
  }
}
