import * as vscode from 'vscode';
import { Disposable } from '../core/base/disposable';

/** A panel a {@link PanelCollection} keeps: its webview panel, and its own dispose. */
export interface KeptPanel {
  readonly panel: vscode.WebviewPanel;
  dispose(): void;
}

/**
 * The open panels of one kind, one per key (an episode, a run, a run folder): shows a key's panel,
 * revealing the open one rather than opening a second, forgets a panel when it is closed, and
 * disposes them all with itself. A kind whose panels survive a reload registers the collection as
 * its serializer with {@link restoreAfterReload} and implements `deserializeWebviewPanel`.
 */
export class PanelCollection<P extends KeptPanel> extends Disposable {
  private readonly panels = new Map<string, P>();

  constructor() {
    super();
    this._register({
      dispose: () => {
        for (const p of this.panels.values()) p.dispose();
        this.panels.clear();
      },
    });
  }

  /** The open panels (tests read their state). */
  get open(): P[] {
    return [...this.panels.values()];
  }

  /** The key's panel: the open one after `reveal`, or the one `create` makes. */
  protected showPanel(key: string, reveal: (open: P) => void, create: () => P): P {
    const existing = this.panels.get(key);
    if (existing) {
      reveal(existing);
      return existing;
    }
    return this.adopt(key, create());
  }

  /** Keeps `panel` under `key` until its webview panel is closed. */
  protected adopt(key: string, panel: P): P {
    this.panels.set(key, panel);
    panel.panel.onDidDispose(() => {
      if (this.panels.get(key) === panel) this.panels.delete(key);
      panel.dispose();
    });
    return panel;
  }

  /** Registers this collection as the serializer that restores `viewType`'s panels after a reload. */
  protected restoreAfterReload(
    this: PanelCollection<P> & vscode.WebviewPanelSerializer,
    viewType: string,
  ): void {
    this._register(vscode.window.registerWebviewPanelSerializer(viewType, this));
  }
}
