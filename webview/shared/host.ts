/**
 * The webview side of the host connection: the VS Code API handle, the panel's protocol over a
 * {@link PanelConnection} (typed notifications, requests answered with their typed result or
 * rejected after their timeout), and view state (`getState`/`setState`).
 */
import type { NotificationType, RequestType } from '../../src/core/base/panelProtocol';
import { PanelConnection, readyNotification } from '../../src/core/base/panelProtocol';

interface VsCodeApi<S> {
  postMessage(message: unknown): void;
  getState(): S | undefined;
  setState(state: S): void;
}

declare function acquireVsCodeApi<S>(): VsCodeApi<S>;

/** How often a page repeats `ready` until its host answers, and how many times at most. */
const READY_REPEAT_MS = 1000;
const READY_REPEATS = 30;

/** A page's connection to its host; `State` is the view state it keeps. */
export class HostConnection<State> {
  private readonly api = acquireVsCodeApi<State>();
  /** Whether the host has sent anything yet (the end of the ready handshake). */
  private heard = false;
  private readyTimer: ReturnType<typeof setInterval> | undefined;
  private readonly connection = new PanelConnection({
    post: (message) => this.api.postMessage(message),
    onMessage: (listener) => {
      const onMessage = (event: MessageEvent) => {
        this.heard = true;
        clearInterval(this.readyTimer);
        listener(event.data);
      };
      window.addEventListener('message', onMessage);
      return { dispose: () => window.removeEventListener('message', onMessage) };
    },
  });

  constructor() {
    window.addEventListener('pagehide', () => {
      clearInterval(this.readyTimer);
      this.connection.dispose();
    });
  }

  /** Handles a notification of the host (its snapshots). */
  on<P extends object>(type: NotificationType<P>, handler: (params: P) => void): void {
    this.connection.onNotification(type, handler);
  }

  /**
   * Tells the host the page is loaded and listening (the ready handshake), and says it again every
   * `repeatMs` until the host answers (at most {@link READY_REPEATS} times): a `ready` the editor
   * drops while it arranges its panels would otherwise leave the page empty for good.
   */
  ready(repeatMs = READY_REPEAT_MS): void {
    const say = () => void this.connection.notify(readyNotification, {});
    say();
    let left = READY_REPEATS;
    clearInterval(this.readyTimer);
    this.readyTimer = setInterval(() => {
      if (this.heard || --left < 0) clearInterval(this.readyTimer);
      else say();
    }, repeatMs);
  }

  /** Sends a notification (no answer), e.g. what the page has drawn. */
  notify<P extends object>(type: NotificationType<P>, params: P): void {
    void this.connection.notify(type, params);
  }

  /** Sends a request; resolves with the host's answer once it has done it. */
  request<P extends object, R>(type: RequestType<P, R>, params: P): Promise<R> {
    return this.connection.sendRequest(type, params);
  }

  get state(): State | undefined {
    return this.api.getState();
  }

  set state(value: State) {
    this.api.setState(value);
  }
}
