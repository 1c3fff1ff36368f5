import * as vscode from 'vscode';
import { Disposable } from '../core/base/disposable';
import type { DashboardMessage, TrainingDashboardSnapshot } from '../core/training/dashboard/protocol';
import { isDashboardViewState, parseDashboardMessage } from '../core/training/dashboard/protocol';
import { TRAINING_DASHBOARD_VIEW_TYPE } from './commands';
import { executeCommand } from './registerCommand';
import type { TrainingRun } from '../core/training/trainingRun';
import type { TrainingRuns } from './trainingRuns';
import { SnapshotPanel, setWebviewPage, webviewPanelOptions } from './webviewPanel';
import { buildMessageHtml } from './webviewHtml';

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
export class TrainingDashboards extends Disposable implements vscode.WebviewPanelSerializer {
  private readonly panels = new Map<string, TrainingDashboard>();

  constructor(private readonly ctx: DashboardContext) {
    super();
    this._register(vscode.window.registerWebviewPanelSerializer(TRAINING_DASHBOARD_VIEW_TYPE, this));
    this._register({ dispose: () => { for (const p of this.panels.values()) p.dispose(); this.panels.clear(); } });
  }

  /** The open dashboards (tests read their state). */
  get open(): TrainingDashboard[] {
    return [...this.panels.values()];
  }

  /** Shows a run's dashboard, reusing its panel when open. */
  show(run: TrainingRun): TrainingDashboard {
    const existing = this.panels.get(run.outDir);
    if (existing) {
      existing.panel.reveal();
      existing.schedule();
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(TRAINING_DASHBOARD_VIEW_TYPE, title(run), { viewColumn: vscode.ViewColumn.Active, preserveFocus: false }, webviewPanelOptions(this.ctx.extensionUri));
    return this.adopt(panel, run);
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    if (!isDashboardViewState(state)) {
      panel.webview.html = buildMessageHtml('Training dashboard', 'This training dashboard cannot be restored. Open the run folder again (Rehearsal: Open Training Run).');
      return;
    }
    panel.webview.options = webviewPanelOptions(this.ctx.extensionUri);
    this.adopt(panel, await this.ctx.training.open(state.outDir));
  }

  private adopt(webviewPanel: vscode.WebviewPanel, run: TrainingRun): TrainingDashboard {
    const dashboard = new TrainingDashboard(webviewPanel, run, this.ctx);
    this.panels.set(run.outDir, dashboard);
    webviewPanel.onDidDispose(() => { this.panels.delete(run.outDir); dashboard.dispose(); });
    return dashboard;
  }
}

function title(run: TrainingRun): string {
  return `Training ${run.name}`;
}

/**
 * One dashboard: pushes the run's whole snapshot (at most every 250 ms while events stream) and
 * answers its buttons through the same commands as the palette.
 */
export class TrainingDashboard extends SnapshotPanel<TrainingDashboardSnapshot, Extract<DashboardMessage, { type: 'rendered' }>> {
  constructor(panel: vscode.WebviewPanel, readonly run: TrainingRun, private readonly ctx: DashboardContext) {
    super(panel, ctx.output, 250);
    setWebviewPage(panel.webview, ctx.extensionUri, { title: title(run), script: 'training', style: 'training' });
    this._register(run.onDidChange(() => this.schedule()));
  }

  protected snapshot(): TrainingDashboardSnapshot {
    return this.run.snapshot();
  }

  protected parse(raw: unknown): DashboardMessage | undefined {
    return parseDashboardMessage(raw);
  }

  protected async handle(message: DashboardMessage): Promise<void> {
    if (message.type !== 'request') return;
    const target = { outDir: this.run.outDir };
    await this.respond(message.id, async () => {
      switch (message.request.method) {
        case 'cancel': return executeCommand('rehearsal.cancelTrainingRun', target);
        case 'resume': return executeCommand('rehearsal.resumeTrainingRun', target);
        case 'usePolicy': return executeCommand('rehearsal.useTrainedPolicy', target);
        case 'compare': return executeCommand('rehearsal.compareFidelity', target);
        case 'showLog': return this.ctx.training.log.show(true);
      }
    });
  }
}
