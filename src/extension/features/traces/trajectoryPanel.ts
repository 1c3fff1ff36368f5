import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AnnotationLibrary } from '../../../core/annotations/library';
import type { TraceLibrary } from '../../../core/trace/index/library';
import type { HostMessage } from '../../../core/trajectory/protocol';
import { isTrajectoryViewState, parsePanelMessage } from '../../../core/trajectory/protocol';
import type { TrajectorySnapshot } from '../../../core/trajectory/snapshot';
import { loadTrajectory } from '../../../core/trajectory/snapshot';
import type { TrajectoryRequestParams } from '../../../core/trajectory/trajectoryProtocol';
import { trajectoryProtocol } from '../../../core/trajectory/trajectoryProtocol';
import type { CallDiffDocuments } from './callDiff';
import { TRAJECTORY_VIEW_TYPE } from '../../commands';
import { UNTRUSTED_REASON } from '../../trust';
import { PanelCollection } from '../../panelCollection';
import { executeCommand } from '../../registerCommand';
import { buildMessageHtml } from '../../webviewHtml';
import { SnapshotHost, webviewPanelOptions } from '../../webviewPanel';

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
export class TrajectoryPanels
  extends PanelCollection<TrajectoryPanel>
  implements vscode.WebviewPanelSerializer
{
  constructor(private readonly ctx: TrajectoryContext) {
    super();
    this.restoreAfterReload(TRAJECTORY_VIEW_TYPE);
  }

  /**
   * Shows an episode, reusing its panel if it is open. `beside`: in the next editor group without
   * taking the focus, so that what has it (a review's diff and its one-key actions) keeps it.
   */
  show(
    file: string,
    episodeId: string,
    focusCallId?: string,
    { beside = false }: { beside?: boolean } = {},
  ): TrajectoryPanel {
    return this.showPanel(
      key(file, episodeId),
      (open) => open.focus(focusCallId, beside),
      () => {
        const panel = vscode.window.createWebviewPanel(
          TRAJECTORY_VIEW_TYPE,
          title(file, episodeId),
          beside
            ? { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }
            : { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
          this.options(),
        );
        return new TrajectoryPanel(panel, file, episodeId, this.ctx, focusCallId);
      },
    );
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    if (!isTrajectoryViewState(state)) {
      panel.webview.html = buildMessageHtml(
        'Trajectory',
        'This Trajectory panel cannot be restored. Open the episode again from the Trace Explorer.',
      );
      return;
    }
    panel.webview.options = this.options();
    this.adopt(
      key(state.file, state.episodeId),
      new TrajectoryPanel(panel, state.file, state.episodeId, this.ctx),
    );
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return webviewPanelOptions(this.ctx.extensionUri);
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
export class TrajectoryPanel extends SnapshotHost<TrajectorySnapshot> {
  /** The last snapshot posted. */
  lastPosted: Extract<HostMessage, { type: 'snapshot' }> | undefined;
  private readonly posted = this._register(new vscode.EventEmitter<HostMessage>());
  /** Fires with every snapshot posted to the webview (after the ready handshake). */
  readonly onDidPost = this.posted.event;

  constructor(
    panel: vscode.WebviewPanel,
    readonly file: string,
    readonly episodeId: string,
    private readonly ctx: TrajectoryContext,
    private focusCallId?: string,
  ) {
    super(panel, ctx.output, {
      snapshot: trajectoryProtocol.snapshot,
      parse: parsePanelMessage,
      label: 'Trajectory panel',
      delayMs: 100,
      debounce: true,
    });
    this.setPage(ctx.extensionUri, {
      title: title(file, episodeId),
      script: 'trajectory',
      style: 'trajectory',
    });
    this._register(
      this.connection.onRequest(trajectoryProtocol.openDiff, async ({ callId }) => {
        await this.ctx.callDiffs.show(this.file, callId, { viewColumn: vscode.ViewColumn.Beside });
      }),
    );
    this._register(
      this.connection.onRequest(trajectoryProtocol.openEpisode, async ({ episodeId, callId }) => {
        await executeCommand('rehearsal.openTrajectory', {
          file: this.file,
          episodeId,
          ...(callId ? { callId } : {}),
        });
      }),
    );
    this._register(
      this.connection.onRequest(trajectoryProtocol.delete, async ({ annotationId }) => {
        await this.ensureWritable();
        await this.ctx.annotations.delete(this.file, annotationId);
      }),
    );
    this._register(
      this.connection.onRequest(trajectoryProtocol.mark, (params) => this.mark(params)),
    );
    this._register(
      this.connection.onRequest(trajectoryProtocol.accept, (params) => this.accept(params)),
    );
    this._register(
      ctx.library.onDidChange((f) => {
        if (f === undefined || f === file) this.schedule();
      }),
    );
    this._register(
      ctx.annotations.onDidChange((f) => {
        if (f === file) this.schedule();
      }),
    );
    this._register(vscode.workspace.onDidGrantWorkspaceTrust(() => this.schedule()));
  }

  /** Brings the panel to the front, scrolled to a call. */
  focus(callId?: string, preserveFocus = false): void {
    this.focusCallId = callId;
    this.panel.reveal(undefined, preserveFocus);
    this.schedule();
  }

  /** Changing annotations needs a trusted workspace and the trace's index. */
  private async ensureWritable() {
    if (!vscode.workspace.isTrusted) throw new Error(UNTRUSTED_REASON);
    return this.ctx.library.ensureIndex(this.file);
  }

  /** The call an annotation is about, as the annotation names it. */
  private async target(
    callId: string,
  ): Promise<{ callId: string; episodeId: string; tool: string }> {
    const call = (await this.ensureWritable())?.call(callId);
    if (!call) throw new Error(`No call ${callId} in this run.`);
    return { callId: call.callId, episodeId: call.episodeId, tool: call.tool };
  }

  private async mark(request: TrajectoryRequestParams<'mark'>): Promise<void> {
    const target = await this.target(request.callId);
    await this.ctx.annotations.mark(this.file, {
      ...target,
      kind: request.kind,
      severity: request.severity,
      ...(request.path ? { path: request.path } : {}),
      ...(request.note ? { note: request.note } : {}),
    });
  }

  private async accept(request: TrajectoryRequestParams<'accept'>): Promise<void> {
    const target = await this.target(request.callId);
    await this.ctx.annotations.accept(this.file, {
      ...target,
      ...(request.note ? { note: request.note } : {}),
    });
  }

  /** The whole state of the episode. */
  protected async snapshot(): Promise<TrajectorySnapshot> {
    const index = await this.ctx.library.ensureIndex(this.file);
    if (!index) throw new Error(this.ctx.library.failure(this.file) ?? `cannot read ${this.file}`);
    const annotations = await this.ctx.annotations.ensure(this.file);
    const snapshot = await loadTrajectory(index, this.episodeId, annotations);
    if (!vscode.workspace.isTrusted) snapshot.readOnly = UNTRUSTED_REASON;
    if (this.focusCallId) snapshot.focusCallId = this.focusCallId;
    return snapshot;
  }

  protected didPost(snapshot: TrajectorySnapshot): void {
    this.lastPosted = { type: 'snapshot', snapshot };
    this.posted.fire(this.lastPosted);
  }
}
