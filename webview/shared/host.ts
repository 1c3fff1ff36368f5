/**
 * The webview side of the host connection: the VS Code API handle, typed posts, requests with ids
 * answered by `response` messages, and view state (`getState`/`setState`).
 */
interface VsCodeApi<S> {
  postMessage(message: unknown): void;
  getState(): S | undefined;
  setState(state: S): void;
}

declare function acquireVsCodeApi<S>(): VsCodeApi<S>;

/** A connection to the host with request ids. `Out` is what the panel sends, `In` what it receives. */
export class HostConnection<Request, In extends { type: string }, State> {
  private readonly api = acquireVsCodeApi<State>();
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();

  constructor(onMessage: (message: In) => void) {
    window.addEventListener('message', (event: MessageEvent) => {
      const message = event.data as In & { id?: number; ok?: boolean; error?: string };
      if (message?.type === 'response' && typeof message.id === 'number') {
        const w = this.waiting.get(message.id);
        this.waiting.delete(message.id);
        if (message.ok) w?.resolve();
        else w?.reject(new Error(message.error ?? 'the request failed'));
        return;
      }
      if (message && typeof message.type === 'string') onMessage(message);
    });
  }

  /** Tells the host the page is loaded and listening (the ready handshake). */
  ready(): void {
    this.api.postMessage({ type: 'ready' });
  }

  /** Sends a notification (no answer), e.g. what the page has drawn. */
  notify<M extends { type: string }>(message: M): void {
    this.api.postMessage(message);
  }

  /** Sends a request; resolves when the host has done it. */
  request(request: Request): Promise<void> {
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.api.postMessage({ type: 'request', id, request });
    });
  }

  get state(): State | undefined {
    return this.api.getState();
  }

  set state(value: State) {
    this.api.setState(value);
  }
}
