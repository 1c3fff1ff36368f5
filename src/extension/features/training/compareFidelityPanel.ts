import * as vscode from 'vscode';
import type { ParamsOf } from '../../../core/base/panelProtocol';
import { compareProtocol } from '../../../core/training/dashboard/compareProtocol';
import type { CompareSnapshot } from '../../../core/training/dashboard/compareView';
import { parseCompareMessage } from '../../../core/training/dashboard/compareView';
import { COMPARE_VIEW_TYPE } from '../../commands';
import { SnapshotPanel, webviewPanelOptions } from '../../webviewPanel';

/**
 * A fidelity comparison of two policies on a held-out trace: a table of per-tool `A→B (Δ)` and a
 * bar chart of the deltas. It shows progress while the replays run, then the result.
 */
export class ComparePanel extends SnapshotPanel<
  CompareSnapshot,
  ParamsOf<typeof compareProtocol.rendered>
> {
  private current: CompareSnapshot;

  constructor(extensionUri: vscode.Uri, output: vscode.LogOutputChannel, initial: CompareSnapshot) {
    super(
      vscode.window.createWebviewPanel(
        COMPARE_VIEW_TYPE,
        'Fidelity comparison',
        { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
        webviewPanelOptions(extensionUri),
      ),
      output,
      compareProtocol,
      parseCompareMessage,
    );
    this.current = initial;
    this.setPage(extensionUri, {
      title: 'Fidelity comparison',
      script: 'compare',
      style: 'training',
    });
    this._register(this.panel.onDidDispose(() => this.dispose()));
  }

  /** Shows a new state of the comparison. */
  update(snapshot: CompareSnapshot): void {
    this.current = snapshot;
    this.schedule();
  }

  protected snapshot(): CompareSnapshot {
    return this.current;
  }
}
