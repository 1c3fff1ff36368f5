import * as vscode from 'vscode';
import { Disposable } from '../core/base/disposable';
import { errorMessage } from '../core/base/errors';
import { buildWebviewHtml, newNonce } from './webviewHtml';

/** Options of the studio's webview panels: scripts on, resources only from the bundles and media/webview. */
export function webviewPanelOptions(extensionUri: vscode.Uri): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  return {
    enableScripts: true,
    retainContextWhenHidden: false,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media', 'webview')],
  };
}

/** Sets a panel's page: the bundle `dist/webview/<script>.js` and `media/webview/<style>.css`, under a fresh nonce. */
export function setWebviewPage(webview: vscode.Webview, extensionUri: vscode.Uri, page: { title: string; script: string; style: string }): void {
  const asset = (...p: string[]) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...p)).toString();
  webview.html = buildWebviewHtml({
    title: page.title,
    cspSource: webview.cspSource,
    nonce: newNonce(),
    scriptUri: asset('dist', 'webview', `${page.script}.js`),
    styleUris: [asset('media', 'webview', `${page.style}.css`)],
  });
}

/**
 * A webview panel that shows whole snapshots: it waits for the page's `ready`, then posts the
 * snapshot {@link snapshot} builds whenever {@link schedule} is called (coalesced), and keeps the
 * last one posted and the page's last `rendered` report for the editor tests.
 */
export abstract class SnapshotPanel<Snapshot, Rendered extends { type: 'rendered' }> extends Disposable {
  private ready = false;
  private pending: NodeJS.Timeout | undefined;
  /** The last snapshot posted. */
  lastPosted: Snapshot | undefined;
  /** What the page said it drew last. */
  lastRendered: Rendered | undefined;
  private readonly posted = this._register(new vscode.EventEmitter<Snapshot>());
  private readonly rendered = this._register(new vscode.EventEmitter<Rendered>());
  /** Fires with every snapshot posted to the page (after the ready handshake). */
  readonly onDidPost = this.posted.event;
  /** Fires when the page reports what it drew. */
  readonly onDidRender = this.rendered.event;

  constructor(readonly panel: vscode.WebviewPanel, protected readonly output: vscode.LogOutputChannel, private readonly delayMs = 100) {
    super();
    this._register(panel.webview.onDidReceiveMessage((raw) => void this.receive(raw)));
    this._register(panel.onDidChangeViewState(() => { if (!panel.visible) this.ready = false; }));
    this._register({ dispose: () => clearTimeout(this.pending) });
  }

  /** Builds the snapshot to post. */
  protected abstract snapshot(): Snapshot | Promise<Snapshot>;

  /** A message of the page other than `ready` and `rendered` (already validated). */
  protected abstract handle(message: unknown): Promise<void>;

  /** Validates a message of the page; undefined for anything malformed. */
  protected abstract parse(raw: unknown): { type: string } | undefined;

  /** Posts a new snapshot soon (several calls in a row post once). */
  schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => { this.pending = undefined; void this.push(); }, this.delayMs);
  }

  private async receive(raw: unknown): Promise<void> {
    const message = this.parse(raw);
    if (!message) {
      this.output.warn(`${this.panel.title}: ignored a malformed message ${JSON.stringify(raw)?.slice(0, 200)}`);
      return;
    }
    if (message.type === 'ready') {
      this.ready = true;
      await this.push();
    } else if (message.type === 'rendered') {
      this.lastRendered = message as Rendered;
      this.rendered.fire(message as Rendered);
    } else {
      await this.handle(message);
    }
  }

  private async push(): Promise<void> {
    if (!this.ready || this.isDisposed) return;
    try {
      const snapshot = await this.snapshot();
      if (this.isDisposed) return;
      this.lastPosted = snapshot;
      await this.panel.webview.postMessage({ type: 'snapshot', snapshot });
      this.posted.fire(snapshot);
    } catch (err) {
      this.output.error(`${this.panel.title}: ${errorMessage(err)}`);
    }
  }

  /** Answers a request of the page. */
  protected async respond(id: number, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
      await this.panel.webview.postMessage({ type: 'response', id, ok: true });
    } catch (err) {
      await this.panel.webview.postMessage({ type: 'response', id, ok: false, error: errorMessage(err) });
    }
  }
}
