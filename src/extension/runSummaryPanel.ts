import * as path from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../core/base/disposable';
import type { RunSummarySnapshot, SummaryMessage } from '../core/report/runSummary';
import { parseSummaryMessage, runSummary } from '../core/report/runSummary';
import type { TraceLibrary } from '../core/trace/index/library';
import { SUMMARY_VIEW_TYPE } from './commands';
import { executeCommand } from './registerCommand';
import { SnapshotPanel, setWebviewPage, webviewPanelOptions } from './webviewPanel';

/**
 * A run's summary: its metrics at the top (success, reward, parse validity, rehearsal validity,
 * fidelity per tool, device) and a sortable, filterable table of its episodes, each row opening its
 * Trajectory. It follows a run being written.
 */
export class RunSummaryPanel extends SnapshotPanel<RunSummarySnapshot, Extract<SummaryMessage, { type: 'rendered' }>> {
  constructor(extensionUri: vscode.Uri, output: vscode.LogOutputChannel, private readonly library: TraceLibrary, readonly file: string) {
    const runId = library.index(file)?.run?.runId ?? path.basename(path.dirname(file));
    super(vscode.window.createWebviewPanel(SUMMARY_VIEW_TYPE, `Run ${runId}`, { viewColumn: vscode.ViewColumn.Active, preserveFocus: false }, webviewPanelOptions(extensionUri)), output);
    setWebviewPage(this.panel.webview, extensionUri, { title: `Run ${runId}`, script: 'summary', style: 'summary' });
    this._register(library.onDidChange((changed) => { if (changed === undefined || changed === file) this.schedule(); }));
    this._register(this.panel.onDidDispose(() => this.dispose()));
  }

  protected async snapshot(): Promise<RunSummarySnapshot> {
    return runSummary(await this.library.requireIndex(this.file));
  }

  protected parse(raw: unknown): SummaryMessage | undefined {
    return parseSummaryMessage(raw);
  }

  protected async handle(message: unknown): Promise<void> {
    const m = message as SummaryMessage;
    if (m.type !== 'request') return;
    await this.respond(m.id, async () => {
      await executeCommand('rehearsal.openTrajectory', { file: this.file, episodeId: m.request.episodeId, ...(m.request.callId ? { callId: m.request.callId } : {}) });
    });
  }
}

/** The open run summaries, one per trace. */
export class RunSummaryPanels extends Disposable {
  private readonly panels = new Map<string, RunSummaryPanel>();

  constructor(private readonly extensionUri: vscode.Uri, private readonly output: vscode.LogOutputChannel, private readonly library: TraceLibrary) {
    super();
    this._register({ dispose: () => { for (const p of this.panels.values()) p.dispose(); this.panels.clear(); } });
  }

  /** The open panels (tests read their state). */
  get open(): RunSummaryPanel[] {
    return [...this.panels.values()];
  }

  /** Shows a run's summary, reusing its panel. */
  show(file: string): RunSummaryPanel {
    const existing = this.panels.get(file);
    if (existing) {
      existing.panel.reveal();
      return existing;
    }
    const panel = new RunSummaryPanel(this.extensionUri, this.output, this.library, file);
    this.panels.set(file, panel);
    panel.panel.onDidDispose(() => { if (this.panels.get(file) === panel) this.panels.delete(file); });
    return panel;
  }
}
