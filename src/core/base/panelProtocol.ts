/**
 * The protocol between a webview panel and its host, one module for every panel and both sides
 * (no `vscode` here: the webview bundles import it too). A panel's protocol is a few definitions:
 * notifications (`ready`, `snapshot`, `rendered`: no answer) and requests, whose definition carries
 * the type of their answer (`request<Params, Result>('openDiff')`, as GitLens' `IpcRequest`). On the
 * wire, a notification is `{ type, ...params }`, a request `{ type: 'request', id, request: { method,
 * ...params } }` and its answer `{ type: 'response', id, ok: true, result }` or `{ ..., ok: false,
 * error }`. A {@link PanelConnection} sends and answers them over any {@link PanelTransport}.
 */
import type { IDisposable } from './disposable';
import type { TimerHandle } from './timers';
import { safeTimeout } from './timers';

/** A notification of a panel's protocol: a message with no answer, `{ type, ...params }` on the wire. */
export interface NotificationType<Params extends object> {
  readonly type: string;
  /** Never set: carries the params' type. */
  readonly _params?: Params;
}

/** A request of a panel's protocol: its method, the type of its params and of its answer. */
export interface RequestType<Params extends object, Result> {
  readonly method: string;
  /** How long the sender waits for the answer; 0 waits as long as it takes (a command that asks the person). */
  readonly timeoutMs?: number;
  /** Never set: carries the params' and the answer's types. */
  readonly _types?: [Params, Result];
}

/** Defines a notification. */
export function notification<Params extends object = Record<never, never>>(
  type: string,
): NotificationType<Params> {
  return { type };
}

/** Defines a request whose answer is a `Result`. */
export function request<Params extends object, Result = void>(
  method: string,
  options: { timeoutMs?: number } = {},
): RequestType<Params, Result> {
  return options.timeoutMs === undefined ? { method } : { method, timeoutMs: options.timeoutMs };
}

/** The params of a notification or request definition. */
export type ParamsOf<T> =
  T extends NotificationType<infer P> ? P : T extends RequestType<infer P, unknown> ? P : never;

/** The answer of a request definition. */
export type ResultOf<T> = T extends RequestType<object, infer R> ? R : never;

/** A request on the wire. */
export interface RequestEnvelope {
  type: 'request';
  id: number;
  request: { method: string } & Record<string, unknown>;
}

/** An answer on the wire. */
export type ResponseEnvelope =
  | { type: 'response'; id: number; ok: true; result?: unknown }
  | { type: 'response'; id: number; ok: false; error: string };

/** Any message of a panel's protocol on the wire. */
export type PanelEnvelope =
  RequestEnvelope | ResponseEnvelope | ({ type: string } & Record<string, unknown>);

/** How a connection reaches the other side: the webview's `postMessage`, or the page's `acquireVsCodeApi()`. */
export interface PanelTransport {
  post(message: PanelEnvelope): unknown;
  onMessage(listener: (raw: unknown) => void): IDisposable;
}

/** What a connection is told besides its transport. */
export interface PanelConnectionOptions {
  /** Validates what the other side sends: the message, or undefined for anything malformed (dropped). */
  parse?: (raw: unknown) => { type: string } | undefined;
  /** Told of every malformed message (the host logs it). */
  onMalformed?: (raw: unknown) => void;
  /** How long a request waits for its answer unless its definition says otherwise (0: no limit). */
  timeoutMs?: number;
}

/** The error of a request that got no answer in time, or that was pending when its connection closed. */
export class PanelRequestError extends Error {
  constructor(
    message: string,
    readonly method: string,
  ) {
    super(message);
    this.name = 'PanelRequestError';
  }
}

/** How long a request waits for its answer by default. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * One side of a panel's connection: sends notifications and requests (a request's promise resolves
 * with its typed answer, rejects with the error the other side answered, or with a
 * {@link PanelRequestError} after its timeout), dispatches what the other side sends to the
 * handlers registered for it, and answers requests with what their handler returns or throws.
 * Disposing it rejects the pending requests and stops all delivery.
 */
export class PanelConnection implements IDisposable {
  private nextId = 1;
  private disposed = false;
  private readonly pending = new Map<
    number,
    {
      method: string;
      resolve: (result: unknown) => void;
      reject: (err: Error) => void;
      timer?: TimerHandle;
    }
  >();
  private readonly notificationHandlers = new Map<string, (params: never) => void>();
  private readonly requestHandlers = new Map<string, (params: never) => unknown>();
  private readonly subscription: IDisposable;

  constructor(
    private readonly transport: PanelTransport,
    private readonly options: PanelConnectionOptions = {},
  ) {
    this.subscription = transport.onMessage((raw) => this.receive(raw));
  }

  /** True once disposed. */
  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Sends a notification; resolves once the transport took it. */
  async notify<P extends object>(type: NotificationType<P>, params: P): Promise<void> {
    if (this.disposed) return;
    await this.transport.post({ ...params, type: type.type });
  }

  /** Sends a request; resolves with its answer. */
  sendRequest<P extends object, R>(type: RequestType<P, R>, params: P): Promise<R> {
    if (this.disposed)
      return Promise.reject(
        new PanelRequestError(`${type.method}: the panel is closed`, type.method),
      );
    const id = this.nextId++;
    const timeoutMs = type.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    return new Promise<R>((resolve, reject) => {
      const entry: {
        method: string;
        resolve: (result: unknown) => void;
        reject: (err: Error) => void;
        timer?: TimerHandle;
      } = { method: type.method, resolve: resolve as (result: unknown) => void, reject };
      if (timeoutMs > 0) {
        entry.timer = safeTimeout(() => {
          this.pending.delete(id);
          reject(
            new PanelRequestError(
              `${type.method}: no answer within ${timeoutMs / 1000} s`,
              type.method,
            ),
          );
        }, timeoutMs);
      }
      this.pending.set(id, entry);
      this.transport.post({ type: 'request', id, request: { ...params, method: type.method } });
    });
  }

  /** Handles a notification of the other side (one handler per type). */
  onNotification<P extends object>(
    type: NotificationType<P>,
    handler: (params: P) => void,
  ): IDisposable {
    this.notificationHandlers.set(type.type, handler as (params: never) => void);
    return {
      dispose: () => {
        this.notificationHandlers.delete(type.type);
      },
    };
  }

  /** Answers a request of the other side with what `handler` returns (or the error it throws). */
  onRequest<P extends object, R>(
    type: RequestType<P, R>,
    handler: (params: P) => R | Promise<R>,
  ): IDisposable {
    this.requestHandlers.set(type.method, handler as (params: never) => unknown);
    return {
      dispose: () => {
        this.requestHandlers.delete(type.method);
      },
    };
  }

  /** Rejects the pending requests and stops listening. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.subscription.dispose();
    for (const [, entry] of this.pending) {
      clearTimeout(entry.timer);
      entry.reject(
        new PanelRequestError(`${entry.method}: the panel closed before it answered`, entry.method),
      );
    }
    this.pending.clear();
    this.notificationHandlers.clear();
    this.requestHandlers.clear();
  }

  private receive(raw: unknown): void {
    if (this.disposed) return;
    if (isResponse(raw)) {
      this.settle(raw);
      return;
    }
    const message = this.options.parse ? this.options.parse(raw) : isMessage(raw) ? raw : undefined;
    if (!message) {
      this.options.onMalformed?.(raw);
      return;
    }
    if (message.type === 'request') void this.answer(message as RequestEnvelope);
    else this.notificationHandlers.get(message.type)?.(message as never);
  }

  private settle(response: ResponseEnvelope): void {
    const entry = this.pending.get(response.id);
    if (!entry) return;
    this.pending.delete(response.id);
    clearTimeout(entry.timer);
    if (response.ok) entry.resolve(response.result);
    else entry.reject(new Error(response.error || 'the request failed'));
  }

  private async answer(message: RequestEnvelope): Promise<void> {
    const { method, ...params } = message.request;
    const handler = this.requestHandlers.get(method);
    let response: ResponseEnvelope;
    try {
      if (!handler) throw new Error(`no handler for ${method}`);
      const result = await handler(params as never);
      response =
        result === undefined
          ? { type: 'response', id: message.id, ok: true }
          : { type: 'response', id: message.id, ok: true, result };
    } catch (err) {
      response = { type: 'response', id: message.id, ok: false, error: errorText(err) };
    }
    if (!this.disposed) await this.transport.post(response);
  }
}

function isMessage(value: unknown): value is { type: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { type?: unknown }).type === 'string'
  );
}

function isResponse(value: unknown): value is ResponseEnvelope {
  return (
    isMessage(value) &&
    value.type === 'response' &&
    typeof (value as { id?: unknown }).id === 'number' &&
    typeof (value as { ok?: unknown }).ok === 'boolean'
  );
}

/** The notifications every snapshot panel shares: the page's `ready`, and the host's whole snapshot. */
export const readyNotification = notification('ready');

/** The host's whole snapshot of what a panel shows. */
export function snapshotNotification<Snapshot>(): NotificationType<{ snapshot: Snapshot }> {
  return notification<{ snapshot: Snapshot }>('snapshot');
}
