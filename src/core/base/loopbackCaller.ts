import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { clip } from './clip';

/** The names a loopback client may put in its Host header. */
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** Why a caller is refused: its status (403 not this machine's client, 401 no key) and message. */
export interface CallerRefusal {
  status: 401 | 403;
  message: string;
}

/**
 * Whether a request to a loopback server (`rehearse serve`, `rehearse collect`) comes from this
 * machine's own clients: the Host header must name the loopback address and port served (a page
 * that rebinds its DNS name to 127.0.0.1 sends its own name), a browser's Origin must be loopback
 * too, and with a key the request must carry it as `Authorization: Bearer <key>` (`keyMessage` is
 * the 401's message: where the key comes from). Undefined when the request may be served.
 */
export function loopbackCallerRefusal(
  req: IncomingMessage,
  port: number,
  key: Buffer | undefined,
  keyMessage: string,
): CallerRefusal | undefined {
  const host = (req.headers.host ?? '').toLowerCase();
  if (!LOOPBACK_NAMES.some((name) => host === `${name}:${port}`))
    return {
      status: 403,
      message: `Refused: the Host header "${clip(host, 80)}" is not this server's loopback address (127.0.0.1:${port} or localhost:${port}).`,
    };
  const origin = req.headers.origin;
  if (
    origin !== undefined &&
    !LOOPBACK_NAMES.some((name) => origin.toLowerCase() === `http://${name}:${port}`)
  )
    return {
      status: 403,
      message: `Refused: requests from web pages (Origin ${clip(origin, 80)}) are not served.`,
    };
  if (key) {
    const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const bytes = Buffer.from(given ?? '', 'utf8');
    if (bytes.length !== key.length || !timingSafeEqual(bytes, key))
      return { status: 401, message: keyMessage };
  }
  return undefined;
}
