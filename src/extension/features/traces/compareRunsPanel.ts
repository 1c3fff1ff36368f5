import * as vscode from 'vscode';
import type { ParamsOf } from '../../../core/base/panelProtocol';
import type { RunComparison } from '../../../core/report/compareRuns';
import { compareRuns, parseRunsMessage } from '../../../core/report/compareRuns';
import { policyLabel } from '../../../core/trace/format/policyLabel';
import { runsProtocol } from '../../../core/report/runsProtocol';
import type { TraceLibrary } from '../../../core/trace/index/library';
import type { CallDiffDocuments } from './callDiff';
import { RUNS_VIEW_TYPE } from '../../commands';
import { executeCommand } from '../../registerCommand';
import { SnapshotPanel, webviewPanelOptions } from '../../webviewPanel';

/**
 * Two runs of the same tasks side by side: per task, the success and mean field F1 of each, and
 * the calls where one rehearsed right and the other wrong, each opening both diffs (A's in the
 * active column, B's beside it).
 */
export class CompareRunsPanel extends SnapshotPanel<
  RunComparison,
  ParamsOf<typeof runsProtocol.rendered>
> {
  constructor(
    extensionUri: vscode.Uri,
    output: vscode.LogOutputChannel,
    private readonly library: TraceLibrary,
    private readonly callDiffs: CallDiffDocuments,
    readonly files: { a: string; b: string },
  ) {
    super(
      vscode.window.createWebviewPanel(
        RUNS_VIEW_TYPE,
        'Compare runs',
        { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
        webviewPanelOptions(extensionUri),
      ),
      output,
      runsProtocol,
      parseRunsMessage,
    );
    this.setPage(extensionUri, {
      title: 'Compare runs',
      script: 'runs',
      style: 'summary',
    });
    this._register(
      library.onDidChange((changed) => {
        if (changed === undefined || changed === files.a || changed === files.b) this.schedule();
      }),
    );
    this._register(
      this.connection.onRequest(runsProtocol.openPair, async (pair) => {
        await this.callDiffs.show(this.files.a, pair.a, {
          viewColumn: vscode.ViewColumn.One,
          preview: false,
        });
        await this.callDiffs.show(this.files.b, pair.b, {
          viewColumn: vscode.ViewColumn.Beside,
          preview: false,
        });
      }),
    );
    this._register(
      this.connection.onRequest(runsProtocol.openTask, async ({ taskId }) => {
        const snapshot = this.lastPosted;
        const task = snapshot?.tasks.find((t) => t.taskId === taskId);
        if (!task) return;
        if (task.a)
          await executeCommand('rehearsal.openTrajectory', {
            file: this.files.a,
            episodeId: task.a.episodeId,
          });
        if (task.b)
          await executeCommand('rehearsal.openTrajectory', {
            file: this.files.b,
            episodeId: task.b.episodeId,
            beside: true,
          });
      }),
    );
    this._register(this.panel.onDidDispose(() => this.dispose()));
  }

  protected async snapshot(): Promise<RunComparison> {
    const [a, b] = [
      await this.library.requireIndex(this.files.a),
      await this.library.requireIndex(this.files.b),
    ];
    return compareRuns(a, b, (index) =>
      index.run ? policyLabel(index.run.policy, index.file) : '',
    );
  }
}
