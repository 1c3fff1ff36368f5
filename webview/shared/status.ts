import type { RequestType } from '../../src/core/base/panelProtocol';
import type { HostConnection } from './host';

/** A page's status line (an element with role="status"): short messages, errors marked. */
export interface StatusLine {
  say(text: string, error?: boolean): void;
  /** Sends a request to the extension: '…' while it runs, then `done`, or the error it answered. */
  send<P extends object>(request: RequestType<P, void>, params: P, done: string): Promise<void>;
}

/** The status line of `element` (read when used: the page may build it later) for requests over `host`. */
export function statusLine(
  host: Pick<HostConnection<unknown>, 'request'>,
  element: () => HTMLElement | undefined,
): StatusLine {
  const say = (text: string, error = false): void => {
    const el = element();
    if (!el) return;
    el.textContent = text;
    el.className = error ? 'status error' : 'status';
  };
  return {
    say,
    async send(request, params, done) {
      say('…');
      try {
        await host.request(request, params);
        say(done);
      } catch (err) {
        say((err as Error).message, true);
      }
    },
  };
}
