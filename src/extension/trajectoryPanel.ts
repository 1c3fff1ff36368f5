import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AnnotationLibrary } from '../core/annotations/library';
import { Disposable } from '../core/base/disposable';
import { errorMessage } from '../core/base/errors';
import type { TraceLibrary } from '../core/trace/index/library';
import type { HostMessage, PanelRequest } from '../core/trajectory/protocol';
import { isTrajectoryViewState, parsePanelMessage } from '../core/trajectory/protocol';
import { loadTrajectory } from '../core/trajectory/snapshot';
import type { CallDiffDocuments } from './callDiff';
import { TRAJECTORY_VIEW_TYPE } from './commands';
import { UNTRUSTED_REASON } from './trust';
import { buildMessageHtml } from './webviewHtml';
import { setWebviewPage, webviewPanelOptions } from './webviewPanel';

/** What a panel needs from the rest of the extension. */
export interface TrajectoryContext {
  extensionUri: vscode.Uri;
  library: TraceLibrary;
  annotations: AnnotationLibrary;
  callDiffs: CallDiffDocuments;
  output: vscode.LogOutputChannel;
}

const key = (file: string, episodeId: string) => `${file}#${episodeId}`;

/**
 * The Trajectory panels: one per episode, opened from the Trace Explorer, a diff or a run's
 * notification, and restored after a reload by their serializer from the panel's view state.
 */
export class TrajectoryPanels extends Disposable implements vscode.WebviewPanelSerializer {
  private readonly panels = new Map<string, TrajectoryPanel>();

  constructor(private readonly ctx: TrajectoryContext) {
    super();
    this._register(vscode.window.registerWebviewPanelSerializer(TRAJECTORY_VIEW_TYPE, this));
    this._register({ dispose: () => { for (const p of this.panels.values()) p.dispose(); this.panels.clear(); } });
  }

  /** The open panels (tests read their state). */
  get open(): TrajectoryPanel[] {
    return [...this.panels.values()];
  }

  /** Shows an episode, reusing its panel if it is open. */
  show(file: string, episodeId: string, focusCallId?: string): TrajectoryPanel {
    const existing = this.panels.get(key(file, episodeId));
    if (existing) {
      existing.focus(focusCallId);
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(TRAJECTORY_VIEW_TYPE, title(file, episodeId), { viewColumn: vscode.ViewColumn.Active, preserveFocus: false }, this.options());
    return this.adopt(panel, file, episodeId, focusCallId);
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    if (!isTrajectoryViewState(state)) {
      panel.webview.html = buildMessageHtml('Trajectory', 'This Trajectory panel cannot be restored. Open the episode again from the Trace Explorer.');
      return;
    }
    panel.webview.options = this.options();
    this.adopt(panel, state.file, state.episodeId);
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return webviewPanelOptions(this.ctx.extensionUri);
  }

  private adopt(webviewPanel: vscode.WebviewPanel, file: string, episodeId: string, focusCallId?: string): TrajectoryPanel {
    const panel = new TrajectoryPanel(webviewPanel, file, episodeId, this.ctx, focusCallId);
    this.panels.set(key(file, episodeId), panel);
    webviewPanel.onDidDispose(() => { this.panels.delete(key(file, episodeId)); panel.dispose(); });
    return panel;
  }
}

function title(file: string, episodeId: string): string {
  return `Trajectory ${episodeId} · ${path.basename(path.dirname(file))}`;
}

/**
 * One panel: builds the page (strict CSP, nonce, no data in it), waits for the webview's `ready`,
 * then pushes whole snapshots of the episode whenever the trace or its annotations change, and
 * answers the panel's requests.
 */
export class TrajectoryPanel extends Disposable {
  private ready = false;
  private pending: NodeJS.Timeout | undefined;
  /** The last snapshot posted. */
  lastPosted: Extract<HostMessage, { type: 'snapshot' }> | undefined;
  private readonly posted = this._register(new vscode.EventEmitter<HostMessage>());
  /** Fires with every message posted to the webview (after the ready handshake). */
  readonly onDidPost = this.posted.event;

  constructor(readonly panel: vscode.WebviewPanel, readonly file: string, readonly episodeId: string, private readonly ctx: TrajectoryContext, private focusCallId?: string) {
    super();
    const webview = panel.webview;
    setWebviewPage(webview, ctx.extensionUri, { title: title(file, episodeId), script: 'trajectory', style: 'trajectory' });
    this._register(webview.onDidReceiveMessage((raw) => void this.receive(raw)));
    this._register(ctx.library.onDidChange((f) => { if (f === undefined || f === file) this.schedule(); }));
    this._register(ctx.annotations.onDidChange((f) => { if (f === file) this.schedule(); }));
    this._register(panel.onDidChangeViewState(() => { if (!panel.visible) this.ready = false; }));
    this._register(vscode.workspace.onDidGrantWorkspaceTrust(() => this.schedule()));
    this._register({ dispose: () => clearTimeout(this.pending) });
  }

  /** Brings the panel to the front, scrolled to a call. */
  focus(callId?: string): void {
    this.focusCallId = callId;
    this.panel.reveal();
    this.schedule();
  }

  private schedule(): void {
    clearTimeout(this.pending);
    this.pending = setTimeout(() => void this.push(), 100);
  }

  private async receive(raw: unknown): Promise<void> {
    const message = parsePanelMessage(raw);
    if (!message) {
      this.ctx.output.warn(`Trajectory panel: ignored a malformed message ${JSON.stringify(raw)?.slice(0, 200)}`);
      return;
    }
    if (message.type === 'ready') {
      this.ready = true;
      await this.push();
      return;
    }
    try {
      await this.handle(message.request);
      await this.post({ type: 'response', id: message.id, ok: true });
    } catch (err) {
      await this.post({ type: 'response', id: message.id, ok: false, error: errorMessage(err) });
    }
  }

  private async handle(request: PanelRequest): Promise<void> {
    if (request.method === 'openDiff') {
      await this.ctx.callDiffs.show(this.file, request.callId, { viewColumn: vscode.ViewColumn.Beside });
      return;
    }
    if (!vscode.workspace.isTrusted) throw new Error(UNTRUSTED_REASON);
    const index = await this.ctx.library.ensureIndex(this.file);
    if (request.method === 'delete') {
      await this.ctx.annotations.delete(this.file, request.annotationId);
      return;
    }
    const call = index?.call(request.callId);
    if (!call) throw new Error(`No call ${request.callId} in this run.`);
    const target = { callId: call.callId, episodeId: call.episodeId, tool: call.tool };
    if (request.method === 'mark') {
      await this.ctx.annotations.mark(this.file, { ...target, kind: request.kind, severity: request.severity, ...(request.path ? { path: request.path } : {}), ...(request.note ? { note: request.note } : {}) });
    } else {
      await this.ctx.annotations.accept(this.file, { ...target, ...(request.note ? { note: request.note } : {}) });
    }
  }

  /** Posts the whole state of the episode (once the webview said it is ready). */
  private async push(): Promise<void> {
    if (!this.ready || this.isDisposed) return;
    try {
      const index = await this.ctx.library.ensureIndex(this.file);
      if (!index) throw new Error(this.ctx.library.failure(this.file) ?? `cannot read ${this.file}`);
      const annotations = await this.ctx.annotations.ensure(this.file);
      const snapshot = await loadTrajectory(index, this.episodeId, annotations);
      if (!vscode.workspace.isTrusted) snapshot.readOnly = UNTRUSTED_REASON;
      if (this.focusCallId) snapshot.focusCallId = this.focusCallId;
      await this.post({ type: 'snapshot', snapshot });
    } catch (err) {
      this.ctx.output.error(`Trajectory panel: ${errorMessage(err)}`);
    }
  }

  private async post(message: HostMessage): Promise<void> {
    if (this.isDisposed) return;
    if (message.type === 'snapshot') this.lastPosted = message;
    await this.panel.webview.postMessage(message);
    this.posted.fire(message);
  }
}
