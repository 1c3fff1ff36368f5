import * as vscode from 'vscode';
import type { ParamsOf, RequestType } from '../../../core/base/panelProtocol';
import { dashboardProtocol } from '../../../core/training/dashboard/dashboardProtocol';
import type { TrainingDashboardSnapshot } from '../../../core/training/dashboard/protocol';
import {
  isDashboardViewState,
  parseDashboardMessage,
} from '../../../core/training/dashboard/protocol';
import { TRAINING_DASHBOARD_VIEW_TYPE } from '../../commands';
import { PanelCollection } from '../../panelCollection';
import { executeCommand } from '../../registerCommand';
import type { TrainingRun } from '../../../core/training/run/trainingRun';
import type { TrainingRuns } from './trainingRuns';
import { SnapshotPanel, webviewPanelOptions } from '../../webviewPanel';
import { buildMessageHtml } from '../../webviewHtml';

/** What the dashboards need from the rest of the extension. */
export interface DashboardContext {
  extensionUri: vscode.Uri;
  training: TrainingRuns;
  output: vscode.LogOutputChannel;
}

/**
 * The training dashboards: one panel per run folder, opened when a run starts or a run folder is
 * opened, and restored after a reload from its view state (the run folder), replotted from
 * events.jsonl.
 */
export class TrainingDashboards
  extends PanelCollection<TrainingDashboard>
  implements vscode.WebviewPanelSerializer
{
  constructor(private readonly ctx: DashboardContext) {
    super();
    this.restoreAfterReload(TRAINING_DASHBOARD_VIEW_TYPE);
  }

  /** Shows a run's dashboard, reusing its panel when open. */
  show(run: TrainingRun): TrainingDashboard {
    return this.showPanel(
      run.outDir,
      (open) => {
        open.panel.reveal();
        open.schedule();
      },
      () => {
        const panel = vscode.window.createWebviewPanel(
          TRAINING_DASHBOARD_VIEW_TYPE,
          title(run),
          { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
          webviewPanelOptions(this.ctx.extensionUri),
        );
        return new TrainingDashboard(panel, run, this.ctx);
      },
    );
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    if (!isDashboardViewState(state)) {
      panel.webview.html = buildMessageHtml(
        'Training dashboard',
        'This training dashboard cannot be restored. Open the run folder again (Rehearsal: Open Training Run).',
      );
      return;
    }
    panel.webview.options = webviewPanelOptions(this.ctx.extensionUri);
    const run = await this.ctx.training.open(state.outDir);
    this.adopt(run.outDir, new TrainingDashboard(panel, run, this.ctx));
  }
}

function title(run: TrainingRun): string {
  return `Training ${run.name}`;
}

/**
 * One dashboard: pushes the run's whole snapshot (at most every 250 ms while events stream) and
 * answers its buttons through the same commands as the palette.
 */
export class TrainingDashboard extends SnapshotPanel<
  TrainingDashboardSnapshot,
  ParamsOf<typeof dashboardProtocol.rendered>
> {
  constructor(
    panel: vscode.WebviewPanel,
    readonly run: TrainingRun,
    private readonly ctx: DashboardContext,
  ) {
    super(panel, ctx.output, dashboardProtocol, parseDashboardMessage, 250);
    this.setPage(ctx.extensionUri, {
      title: title(run),
      script: 'training',
      style: 'training',
    });
    this._register(run.onDidChange(() => this.schedule()));
    const target = { outDir: run.outDir };
    const answer = (
      request: RequestType<Record<never, never>, void>,
      work: () => Thenable<unknown>,
    ) =>
      this._register(
        this.connection.onRequest(request, async () => {
          await work();
        }),
      );
    answer(dashboardProtocol.cancel, () => executeCommand('rehearsal.cancelTrainingRun', target));
    answer(dashboardProtocol.resume, () => executeCommand('rehearsal.resumeTrainingRun', target));
    answer(dashboardProtocol.usePolicy, () => executeCommand('rehearsal.useTrainedPolicy', target));
    answer(dashboardProtocol.compare, () => executeCommand('rehearsal.compareFidelity', target));
    answer(dashboardProtocol.showLog, async () => this.ctx.training.log.show(true));
  }

  protected snapshot(): TrainingDashboardSnapshot {
    return this.run.snapshot();
  }
}
