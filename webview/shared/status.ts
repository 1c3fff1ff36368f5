import type { HostConnection } from './host';

/** A page's status line (an element with role="status"): short messages, errors marked. */
export interface StatusLine<Request> {
  say(text: string, error?: boolean): void;
  /** Sends a request to the extension: '…' while it runs, then `done`, or the error it answered. */
  send(request: Request, done: string): Promise<void>;
}

/** The status line of `element` (read when used: the page may build it later) for requests over `host`. */
export function statusLine<Request>(host: Pick<HostConnection<Request, { type: string }, unknown>, 'request'>, element: () => HTMLElement | undefined): StatusLine<Request> {
  const say = (text: string, error = false): void => {
    const el = element();
    if (!el) return;
    el.textContent = text;
    el.className = error ? 'status error' : 'status';
  };
  return {
    say,
    async send(request, done) {
      say('…');
      try {
        await host.request(request);
        say(done);
      } catch (err) {
        say((err as Error).message, true);
      }
    },
  };
}
