import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzip } from 'node:zlib';
import { loopbackCallerRefusal } from '../base/loopbackCaller';
import type { TimerHandle } from '../base/timers';
import { safeInterval, safeTimeout } from '../base/timers';
import type { JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import type { OtlpData, OtlpLogRecord, OtlpSpan } from './otlpJson';
import { emptyOtlpData, MAX_RECORDS, readOtlpRequest } from './otlpJson';
import type { OtlpSignal } from './otlpProto';
import {
  decodeOtlpProtobuf,
  OtlpProtobufError,
  otlpResponseProtobuf,
  otlpStatusProtobuf,
} from './otlpProto';

/** The port OTLP/HTTP exporters send to when given no endpoint. */
export const OTLP_HTTP_PORT = 4318;
/** The largest request body taken, before and after gzip. */
export const MAX_RECEIVER_BODY_BYTES = 16 * 2 ** 20;
/** A trace with no new span for this long is written. */
export const QUIET_MS = 2000;
/** A trace whose root span has ended is written after this grace (log records come separately). */
export const ROOT_GRACE_MS = 300;

/** A refused request's body is read and dropped up to this size and time, then cut. */
const DRAIN_BYTES = 4 * MAX_RECEIVER_BODY_BYTES;
const DRAIN_MS = 10_000;
/** How long {@link OtlpReceiver.close} waits for open connections before cutting them. */
const CLOSE_MS = 5_000;

const PATHS: Record<string, OtlpSignal> = { '/v1/traces': 'traces', '/v1/logs': 'logs' };
/** gRPC codes for the google.rpc.Status of an error response, by HTTP status. */
const GRPC_CODE: Record<number, number> = {
  400: 3,
  401: 16,
  403: 7,
  404: 12,
  405: 12,
  413: 8,
  415: 3,
  500: 13,
  503: 14,
};

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Spans and log records of one trace not written yet. */
interface Pending {
  spans: OtlpSpan[];
  logs: OtlpLogRecord[];
  lastMs: number;
  rootEnded: boolean;
}

/** How the receiver is set up. */
export interface OtlpReceiverOptions {
  /** Requests must carry it as `Authorization: Bearer <token>`. */
  token: string;
  /** Called with each batch of complete traces, one call at a time, in order. */
  onTraces: (data: OtlpData) => Promise<void>;
  /** Called when a write fails; the receiver goes on. */
  onError: (err: unknown) => void;
  maxBodyBytes?: number;
  quietMs?: number;
  rootGraceMs?: number;
}

/**
 * An OTLP/HTTP receiver on loopback (`rehearse collect`): POST `/v1/traces` and `/v1/logs`, OTLP
 * protobuf or JSON, gzip or not, answered as OTLP/HTTP answers (200 with an empty export response
 * in the request's encoding; errors with a google.rpc.Status). Only this machine's clients with the
 * launch's token are served: a browser page (any Origin header), a request without the token, or a
 * body over the limit is refused. Spans are gathered by trace and handed to `onTraces` when the
 * trace is complete: its root span ended (after a short grace for its log records), or no span came
 * for it for a quiet period; {@link close} hands over what is pending.
 */
export class OtlpReceiver {
  private server: Server | undefined;
  private port = 0;
  private readonly token: Buffer;
  private readonly pending = new Map<string, Pending>();
  private pendingRecords = 0;
  private timer: TimerHandle | undefined;
  private writing: Promise<void> = Promise.resolve();
  private requests = 0;

  constructor(private readonly options: OtlpReceiverOptions) {
    this.token = Buffer.from(options.token, 'utf8');
  }

  /** Starts listening on 127.0.0.1; resolves with the base URL (`http://127.0.0.1:PORT`). */
  async listen(port: number): Promise<string> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.timer = safeInterval(() => this.flushDue(false), 100);
    return `http://127.0.0.1:${this.port}`;
  }

  /** Stops taking requests and writes every pending trace. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    // Requests under way are answered and taken; idle kept-alive connections are closed now.
    const closed = new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
    this.server?.closeIdleConnections();
    // A connection kept open past a few seconds is cut: what it sent has been taken by then.
    const cut = safeTimeout(() => this.server?.closeAllConnections(), CLOSE_MS);
    await closed;
    clearTimeout(cut);
    this.flushDue(true);
    await this.writing;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const protobuf = mediaType(req) === 'application/x-protobuf';
    try {
      const refusal = loopbackCallerRefusal(
        req,
        this.port,
        this.token,
        'Missing or wrong token: send "Authorization: Bearer <token>" with the token `rehearse collect` printed (OTEL_EXPORTER_OTLP_HEADERS).',
      );
      if (refusal) throw new Refusal(refusal.status, refusal.message);
      const url = new URL(req.url ?? '/', 'http://localhost');
      const signal = PATHS[url.pathname];
      if (!signal)
        throw new Refusal(404, `No route ${url.pathname}; use POST /v1/traces or /v1/logs.`);
      if (req.method !== 'POST') throw new Refusal(405, `Use POST ${url.pathname}.`);
      const type = mediaType(req);
      if (type !== 'application/x-protobuf' && type !== 'application/json')
        throw new Refusal(
          415,
          `Content-Type ${type || '(none)'} is not taken; send application/x-protobuf or application/json.`,
        );
      const body = await this.readBody(req);
      const request = protobuf ? decodeProtobuf(body, signal) : parseJson(body);
      this.take(request);
      res.writeHead(200, { 'content-type': type });
      res.end(protobuf ? otlpResponseProtobuf(signal) : '{}');
    } catch (caught) {
      const err =
        caught instanceof Refusal
          ? caught
          : new Refusal(
              500,
              `The receiver failed: ${caught instanceof Error ? caught.message : String(caught)}`,
            );
      // The client is still sending: what is left of the body is read and dropped (within a bound),
      // so that it gets the answer, not a broken pipe; the connection closes after the answer.
      if (!req.complete && !(await drain(req))) {
        req.destroy();
        return;
      }
      res.writeHead(err.status, {
        'content-type': protobuf ? 'application/x-protobuf' : 'application/json',
        connection: 'close',
      });
      const code = GRPC_CODE[err.status] ?? 2;
      res.end(
        protobuf
          ? otlpStatusProtobuf(code, err.message)
          : JSON.stringify({ code, message: err.message }),
      );
    }
  }

  /** The body, gunzipped when sent so; over the limit (either way) is a 413. */
  private async readBody(req: IncomingMessage): Promise<Buffer> {
    const limit = this.options.maxBodyBytes ?? MAX_RECEIVER_BODY_BYTES;
    const tooLarge = () =>
      new Refusal(413, `The body is over ${limit} bytes, the most this receiver takes.`);
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'gzip' && encoding !== 'identity')
      throw new Refusal(415, `Content-Encoding ${encoding} is not taken; send gzip or none.`);
    if (Number(req.headers['content-length'] ?? 0) > limit) throw tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge();
      chunks.push(chunk);
    }
    const raw = Buffer.concat(chunks);
    if (encoding === 'identity') return raw;
    return new Promise((resolve, reject) =>
      gunzip(raw, { maxOutputLength: limit }, (err, out) => {
        if (!err) return resolve(out);
        reject(
          (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
            ? tooLarge()
            : new Refusal(400, `The gzip body does not decompress: ${err.message}.`),
        );
      }),
    );
  }

  /** Reads a request's spans and log records into the pending traces. */
  private take(request: JsonValue): void {
    if (!isJsonObject(request))
      throw new Refusal(400, 'The body is not an export request (a JSON object).');
    const data = emptyOtlpData();
    this.requests++;
    // An empty request (no resourceSpans nor resourceLogs) is taken, and gives nothing.
    if ('resourceSpans' in request || 'resourceLogs' in request)
      readOtlpRequest(request, `request ${this.requests}`, 1, data);
    const count = data.spans.length + data.logs.length;
    if (this.pendingRecords + count > MAX_RECORDS)
      throw new Refusal(
        503,
        `${this.pendingRecords} spans and log records are waiting to be written; try again.`,
      );
    this.pendingRecords += count;
    const now = Date.now();
    const of = (traceId: string): Pending => {
      let p = this.pending.get(traceId);
      if (!p)
        this.pending.set(traceId, (p = { spans: [], logs: [], lastMs: now, rootEnded: false }));
      p.lastMs = now;
      return p;
    };
    for (const span of data.spans) {
      const p = of(span.traceId);
      p.spans.push(span);
      // Exporters send a span when it has ended: a root span sent is a root span ended.
      if (!span.parentSpanId) p.rootEnded = true;
    }
    for (const log of data.logs) of(log.traceId).logs.push(log);
  }

  /** Hands the traces that are complete (all, when `all`) to `onTraces`, in order. */
  private flushDue(all: boolean): void {
    const now = Date.now();
    const quiet = this.options.quietMs ?? QUIET_MS;
    const grace = this.options.rootGraceMs ?? ROOT_GRACE_MS;
    const due = emptyOtlpData();
    for (const [traceId, p] of this.pending) {
      const idle = now - p.lastMs;
      if (!all && idle < quiet && !(p.rootEnded && idle >= grace)) continue;
      this.pending.delete(traceId);
      this.pendingRecords -= p.spans.length + p.logs.length;
      due.spans.push(...p.spans);
      due.logs.push(...p.logs);
    }
    if (!due.spans.length && !due.logs.length) return;
    this.writing = this.writing.then(() =>
      this.options.onTraces(due).catch((err: unknown) => this.options.onError(err)),
    );
  }
}

/** Reads and drops the rest of a refused request: false when it goes past the bound. */
function drain(req: IncomingMessage): Promise<boolean> {
  return new Promise((resolve) => {
    let size = 0;
    const timer = safeTimeout(() => resolve(false), DRAIN_MS);
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > DRAIN_BYTES) {
        clearTimeout(timer);
        resolve(false);
      }
    });
    req.once('end', () => {
      clearTimeout(timer);
      resolve(true);
    });
    req.once('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
    req.resume();
  });
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

function decodeProtobuf(body: Buffer, signal: OtlpSignal): JsonValue {
  try {
    return decodeOtlpProtobuf(body, signal);
  } catch (err) {
    if (!(err instanceof OtlpProtobufError)) throw err;
    throw new Refusal(400, `The body is ${err.message}.`);
  }
}

function parseJson(body: Buffer): JsonValue {
  try {
    return JSON.parse(body.toString('utf8')) as JsonValue;
  } catch {
    throw new Refusal(400, 'The body is not JSON (OTLP JSON: one export request).');
  }
}
