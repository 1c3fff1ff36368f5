import * as vscode from 'vscode';
import { Disposable } from '../core/base/disposable';
import { errorMessage } from '../core/base/errors';
import type { NotificationType } from '../core/base/panelProtocol';
import { PanelConnection, readyNotification } from '../core/base/panelProtocol';
import { buildWebviewHtml, newNonce } from './webviewHtml';
import { safeTimeout } from '../core/base/timers';

/** Options of the studio's webview panels: scripts on, resources only from the bundles and media/webview. */
export function webviewPanelOptions(
  extensionUri: vscode.Uri,
): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  return {
    enableScripts: true,
    retainContextWhenHidden: false,
    localResourceRoots: [
      vscode.Uri.joinPath(extensionUri, 'dist', 'webview'),
      vscode.Uri.joinPath(extensionUri, 'media', 'webview'),
    ],
  };
}

/** Sets a panel's page: the bundle `dist/webview/<script>.js` and `media/webview/<style>.css`, under a fresh nonce. */
export function setWebviewPage(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  page: { title: string; script: string; style: string },
): void {
  const asset = (...p: string[]) =>
    webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...p)).toString();
  webview.html = buildWebviewHtml({
    title: page.title,
    cspSource: webview.cspSource,
    nonce: newNonce(),
    scriptUri: asset('dist', 'webview', `${page.script}.js`),
    styleUris: [asset('media', 'webview', `${page.style}.css`)],
  });
}

/** A connection to a panel's page: validated by `parse`, a malformed message logged and dropped. */
export function webviewConnection(
  webview: vscode.Webview,
  parse: (raw: unknown) => { type: string } | undefined,
  warn: (raw: unknown) => void,
): PanelConnection {
  return new PanelConnection(
    {
      post: (message) => webview.postMessage(message),
      onMessage: (listener) => webview.onDidReceiveMessage(listener),
    },
    { parse, onMalformed: warn },
  );
}

/** What a snapshot panel is told of its page's protocol. */
export interface SnapshotPanelOptions<Snapshot> {
  /** How the host posts its snapshot. */
  snapshot: NotificationType<{ snapshot: Snapshot }>;
  /** Validates what the page sends. */
  parse: (raw: unknown) => { type: string } | undefined;
  /** How the log names the panel. */
  label: string;
  /** How long changes gather before a snapshot is posted. */
  delayMs?: number;
  /** Each change restarts the wait (the Trajectory panel), instead of posting once the first wait is over. */
  debounce?: boolean;
}

/** How long a shown page may stay silent before its host loads it again, and how many times it does. */
const PAGE_SILENT_MS = 8000;
const PAGE_RELOADS = 3;

/**
 * The host side of a panel that shows whole snapshots: it loads the page ({@link setPage}), waits for
 * its `ready`, then posts the snapshot {@link snapshot} builds whenever {@link schedule} is called,
 * over one {@link PanelConnection} whose requests subclasses answer through {@link connection}.
 * A page that is shown and says nothing for {@link PAGE_SILENT_MS} (its script never ran, or the
 * editor dropped what it said) is loaded again, a few times at most, rather than left empty.
 */
export abstract class SnapshotHost<Snapshot> extends Disposable {
  private ready = false;
  /** Whether the page said `ready` since it was last shown (a page not kept when hidden reloads). */
  private heardSinceShown = false;
  private pending: NodeJS.Timeout | undefined;
  private silence: NodeJS.Timeout | undefined;
  private reloadsLeft = PAGE_RELOADS;
  private page:
    { extensionUri: vscode.Uri; title: string; script: string; style: string } | undefined;
  /** The connection to the page; subclasses register their request handlers on it. */
  protected readonly connection: PanelConnection;

  constructor(
    readonly panel: vscode.WebviewPanel,
    protected readonly output: vscode.LogOutputChannel,
    private readonly options: SnapshotPanelOptions<Snapshot>,
  ) {
    super();
    this.connection = this._register(
      webviewConnection(panel.webview, options.parse, (raw) =>
        this.output.warn(
          `${options.label}: ignored a malformed message ${JSON.stringify(raw)?.slice(0, 200)}`,
        ),
      ),
    );
    // A page says `ready` each time it loads (again after it was hidden, its context not kept)
    // and repeats it until the host answers. Visibility only decides whether to post now: a view
    // state that arrives after the page's `ready` must not make the host wait for a `ready` that
    // was already said.
    this._register(
      this.connection.onNotification(readyNotification, () => {
        this.output.trace(`${options.label}: the page is ready (visible: ${panel.visible})`);
        this.ready = true;
        this.heardSinceShown = true;
        clearTimeout(this.silence);
        void this.push();
      }),
    );
    let wasVisible = panel.visible;
    this._register(
      panel.onDidChangeViewState(() => {
        if (panel.visible && !wasVisible) {
          this.heardSinceShown = false;
          this.watchSilence();
        }
        wasVisible = panel.visible;
        if (panel.visible) this.schedule();
      }),
    );
    this._register({
      dispose: () => {
        clearTimeout(this.pending);
        clearTimeout(this.silence);
      },
    });
  }

  /** Builds the snapshot to post. */
  protected abstract snapshot(): Snapshot | Promise<Snapshot>;

  /** Called with every snapshot posted. */
  protected abstract didPost(snapshot: Snapshot): void;

  /**
   * Loads the page: `dist/webview/<script>.js` and `media/webview/<style>.css` under a fresh nonce
   * ({@link setWebviewPage}), again whenever it stays silent.
   */
  protected setPage(
    extensionUri: vscode.Uri,
    page: { title: string; script: string; style: string },
  ): void {
    this.page = { extensionUri, ...page };
    this.load();
  }

  private load(): void {
    if (!this.page || this.isDisposed) return;
    setWebviewPage(this.panel.webview, this.page.extensionUri, this.page);
    this.heardSinceShown = false;
    this.watchSilence();
  }

  private watchSilence(): void {
    clearTimeout(this.silence);
    if (!this.page) return;
    this.silence = safeTimeout(() => {
      if (this.isDisposed || !this.panel.visible || this.heardSinceShown) return;
      if (this.reloadsLeft-- <= 0) {
        this.output.error(
          `${this.options.label}: the page said nothing after ${PAGE_RELOADS} loads; close it and open it again`,
        );
        return;
      }
      this.output.warn(
        `${this.options.label}: the page said nothing in ${PAGE_SILENT_MS / 1000} s; loading it again`,
      );
      this.load();
    }, PAGE_SILENT_MS);
  }

  /** Posts a new snapshot soon (several calls in a row post once). */
  schedule(): void {
    if (this.options.debounce) clearTimeout(this.pending);
    else if (this.pending) return;
    this.pending = safeTimeout(() => {
      this.pending = undefined;
      void this.push();
    }, this.options.delayMs ?? 100);
  }

  private async push(): Promise<void> {
    if (!this.ready || this.isDisposed || !this.panel.visible) return;
    try {
      const snapshot = await this.snapshot();
      if (this.isDisposed) return;
      await this.connection.notify(this.options.snapshot, { snapshot });
      this.didPost(snapshot);
    } catch (err) {
      this.output.error(`${this.options.label}: ${errorMessage(err)}`);
    }
  }
}

/**
 * A snapshot panel that keeps the last snapshot posted and the page's last `rendered` report for
 * the editor tests.
 */
export abstract class SnapshotPanel<
  Snapshot,
  Rendered extends object,
> extends SnapshotHost<Snapshot> {
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

  constructor(
    panel: vscode.WebviewPanel,
    output: vscode.LogOutputChannel,
    protocol: {
      snapshot: NotificationType<{ snapshot: Snapshot }>;
      rendered: NotificationType<Rendered>;
    },
    parse: (raw: unknown) => { type: string } | undefined,
    delayMs = 100,
  ) {
    super(panel, output, { snapshot: protocol.snapshot, parse, label: panel.title, delayMs });
    this._register(
      this.connection.onNotification(protocol.rendered, (message) => {
        this.lastRendered = message;
        this.rendered.fire(message);
      }),
    );
  }

  protected didPost(snapshot: Snapshot): void {
    this.lastPosted = snapshot;
    this.posted.fire(snapshot);
  }
}
