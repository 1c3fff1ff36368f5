import type { JsonObject, JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import type { OtlpFault, OtlpFaultCode } from './codes';

/** The largest string an attribute or event body may hold (characters). */
export const MAX_ATTRIBUTE_CHARS = 8 * 2 ** 20;
/** How deep an AnyValue (arrays and key-value lists in one another) may nest. */
export const MAX_VALUE_DEPTH = 64;
/** At most this many spans and log records in one import, all files together. */
export const MAX_RECORDS = 1_000_000;
/** At most this many attributes per span, event or log record, and events per span. */
export const MAX_PER_RECORD = 4096;

/** An event of a span, or a log record that names a span: the older GenAI conventions' messages. */
export interface OtlpEvent {
  name: string;
  timeNs: bigint;
  attributes: JsonObject;
  /** A log record's body. */
  body?: JsonValue;
}

/** One span, its attributes as JSON values. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startNs: bigint;
  endNs: bigint;
  attributes: JsonObject;
  events: OtlpEvent[];
  /** OTLP's status: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  /** The resource's `service.name`. */
  service?: string;
  file: string;
  line: number;
}

/** A log record tied to a span (its trace and span ids), and where it was read. */
export interface OtlpLogRecord extends OtlpEvent {
  traceId: string;
  spanId: string;
  file: string;
  line: number;
}

/** What was read of OTLP JSON: spans, log records tied to spans, and what could not be read. */
export interface OtlpData {
  spans: OtlpSpan[];
  logs: OtlpLogRecord[];
  faults: OtlpFault[];
}

/** An empty collection to read files into. */
export function emptyOtlpData(): OtlpData {
  return { spans: [], logs: [], faults: [] };
}

/**
 * Reads OTLP JSON as the OpenTelemetry exporters write it: one ExportTraceServiceRequest or
 * ExportLogsServiceRequest per line (the collector's file exporter), or one whole document, pretty
 * printed or not. Spans and log records go into `into`; what cannot be read becomes a coded fault
 * with its line and span id, and the rest is read. Never throws on its input.
 */
export function readOtlpJson(text: string, file: string, into: OtlpData): void {
  const reader = new Reader(file, into);
  const lines = text.split('\n');
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first < 0) return;
  // A document spread over lines: its first line is not JSON on its own.
  const firstLine = parseJson(lines[first]);
  if (firstLine === undefined) {
    const whole = parseJson(text);
    if (whole !== undefined) return reader.request(whole, first + 1);
  }
  lines.forEach((raw, i) => {
    if (raw.trim() === '') return;
    const value = i === first ? firstLine : parseJson(raw);
    if (value === undefined)
      reader.fault('OTLP_LINE_NOT_JSON', i + 1, 'the line is not JSON; it is skipped');
    else reader.request(value, i + 1);
  });
}

/**
 * Reads one decoded export request (an ExportTraceServiceRequest or ExportLogsServiceRequest as
 * OTLP JSON, from a line of a file, a protobuf body or a receiver's request) into `into`, as
 * {@link readOtlpJson} reads each line. Never throws on its input.
 */
export function readOtlpRequest(
  value: JsonValue,
  file: string,
  line: number,
  into: OtlpData,
): void {
  new Reader(file, into).request(value, line);
}

function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A trace or span id as hex: OTLP JSON writes hex; protobuf's JSON mapping writes base64. */
function idHex(v: unknown, bytes: number): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  if (v.length === bytes * 2 && HEX.test(v)) return /^0+$/.test(v) ? undefined : v.toLowerCase();
  if (BASE64.test(v)) {
    const b = Buffer.from(v, 'base64');
    if (b.length === bytes && b.some((x) => x !== 0)) return b.toString('hex');
  }
  return undefined;
}

function nanos(v: unknown): bigint {
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.max(0, Math.trunc(v)));
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) return BigInt(v);
  return 0n;
}

function list(v: unknown): JsonValue[] {
  return Array.isArray(v) ? v : [];
}

class ValueTooLarge extends Error {}

/** Reads one file's requests into an {@link OtlpData}, counting against the shared limits. */
class Reader {
  constructor(
    private readonly file: string,
    private readonly data: OtlpData,
  ) {}

  fault(
    code: OtlpFaultCode,
    line: number,
    message: string,
    ids: { traceId?: string; spanId?: string } = {},
  ): void {
    this.data.faults.push({ code, file: this.file, line, ...ids, message });
  }

  request(value: JsonValue, line: number): void {
    if (!isJsonObject(value) || (!('resourceSpans' in value) && !('resourceLogs' in value))) {
      this.fault('OTLP_NOT_OTLP', line, 'neither resourceSpans nor resourceLogs; skipped');
      return;
    }
    for (const rs of list(value['resourceSpans'])) {
      if (!isJsonObject(rs)) continue;
      const service = this.serviceName(rs, line);
      for (const ss of list(rs['scopeSpans'] ?? rs['instrumentationLibrarySpans'])) {
        if (!isJsonObject(ss)) continue;
        for (const span of list(ss['spans'])) this.span(span, line, service);
      }
    }
    for (const rl of list(value['resourceLogs'])) {
      if (!isJsonObject(rl)) continue;
      for (const sl of list(rl['scopeLogs'])) {
        if (!isJsonObject(sl)) continue;
        for (const record of list(sl['logRecords'])) this.log(record, line);
      }
    }
  }

  private serviceName(resource: JsonObject, line: number): string | undefined {
    const r = resource['resource'];
    if (!isJsonObject(r)) return undefined;
    const name = this.attributes(r['attributes'], line, {})['service.name'];
    return typeof name === 'string' ? name : undefined;
  }

  private full(line: number): boolean {
    if (this.data.spans.length + this.data.logs.length < MAX_RECORDS) return false;
    if (!this.data.faults.some((f) => f.code === 'OTLP_TOO_MANY' && !f.spanId))
      this.fault(
        'OTLP_TOO_MANY',
        line,
        `more than ${MAX_RECORDS} spans and log records; the rest are skipped`,
      );
    return true;
  }

  private span(raw: JsonValue, line: number, service: string | undefined): void {
    if (this.full(line)) return;
    if (!isJsonObject(raw)) {
      this.fault('OTLP_SPAN_INVALID', line, 'a span is not an object; skipped');
      return;
    }
    const spanId = idHex(raw['spanId'], 8);
    const traceId = idHex(raw['traceId'], 16);
    const shown = typeof raw['spanId'] === 'string' ? raw['spanId'].slice(0, 32) : undefined;
    if (!spanId) {
      this.fault('OTLP_SPAN_INVALID', line, 'a span has no valid span id; skipped', {
        ...(shown ? { spanId: shown } : {}),
      });
      return;
    }
    if (!traceId) {
      this.fault('OTLP_SPAN_NO_TRACE', line, `span ${spanId} has no valid trace id; skipped`, {
        spanId,
      });
      return;
    }
    const ids = { traceId, spanId };
    const status = isJsonObject(raw['status']) ? raw['status'] : {};
    const events = list(raw['events']);
    if (events.length > MAX_PER_RECORD)
      this.fault(
        'OTLP_TOO_MANY',
        line,
        `span ${spanId} has ${events.length} events; the first ${MAX_PER_RECORD} are read`,
        ids,
      );
    const parent = idHex(raw['parentSpanId'], 8);
    this.data.spans.push({
      traceId,
      spanId,
      ...(parent ? { parentSpanId: parent } : {}),
      name: typeof raw['name'] === 'string' ? raw['name'] : '',
      startNs: nanos(raw['startTimeUnixNano']),
      endNs: nanos(raw['endTimeUnixNano']),
      attributes: this.attributes(raw['attributes'], line, ids),
      events: events.slice(0, MAX_PER_RECORD).flatMap((e) =>
        isJsonObject(e)
          ? [
              {
                name: typeof e['name'] === 'string' ? e['name'] : '',
                timeNs: nanos(e['timeUnixNano']),
                attributes: this.attributes(e['attributes'], line, ids),
              },
            ]
          : [],
      ),
      status: {
        code: typeof status['code'] === 'number' ? status['code'] : statusCode(status['code']),
        ...(typeof status['message'] === 'string' && status['message']
          ? { message: status['message'] }
          : {}),
      },
      ...(service ? { service } : {}),
      file: this.file,
      line,
    });
  }

  private log(raw: JsonValue, line: number): void {
    if (this.full(line)) return;
    if (!isJsonObject(raw)) {
      this.fault('OTLP_SPAN_INVALID', line, 'a log record is not an object; skipped');
      return;
    }
    const traceId = idHex(raw['traceId'], 16);
    const spanId = idHex(raw['spanId'], 8);
    // A log record of no span cannot join a conversation: not a fault, just not GenAI content.
    if (!traceId || !spanId) return;
    const ids = { traceId, spanId };
    const attributes = this.attributes(raw['attributes'], line, ids);
    const name =
      typeof raw['eventName'] === 'string' && raw['eventName']
        ? raw['eventName']
        : typeof attributes['event.name'] === 'string'
          ? attributes['event.name']
          : '';
    let body: JsonValue | undefined;
    try {
      body = raw['body'] === undefined ? undefined : anyValue(raw['body'], 0);
    } catch (err) {
      if (!(err instanceof ValueTooLarge)) throw err;
      this.fault('OTLP_ATTRIBUTE_TOO_LARGE', line, `log record body: ${err.message}; dropped`, ids);
    }
    this.data.logs.push({
      ...ids,
      name,
      timeNs: nanos(raw['timeUnixNano'] ?? raw['observedTimeUnixNano']),
      attributes,
      ...(body !== undefined ? { body } : {}),
      file: this.file,
      line,
    });
  }

  /** OTLP's key-value list as a JSON object; values too large or deep are dropped with a fault. */
  private attributes(
    raw: unknown,
    line: number,
    ids: { traceId?: string; spanId?: string },
  ): JsonObject {
    const out: JsonObject = {};
    const items = list(raw);
    if (items.length > MAX_PER_RECORD)
      this.fault(
        'OTLP_TOO_MANY',
        line,
        `${items.length} attributes on one record; the first ${MAX_PER_RECORD} are read`,
        ids,
      );
    for (const kv of items.slice(0, MAX_PER_RECORD)) {
      if (!isJsonObject(kv) || typeof kv['key'] !== 'string') continue;
      try {
        out[kv['key']] = anyValue(kv['value'], 0);
      } catch (err) {
        if (!(err instanceof ValueTooLarge)) throw err;
        this.fault(
          'OTLP_ATTRIBUTE_TOO_LARGE',
          line,
          `attribute ${kv['key'].slice(0, 100)}${ids.spanId ? ` of span ${ids.spanId}` : ''}: ${err.message}; dropped`,
          ids,
        );
      }
    }
    return out;
  }
}

function statusCode(v: unknown): number {
  return v === 'STATUS_CODE_ERROR' ? 2 : v === 'STATUS_CODE_OK' ? 1 : 0;
}

/** OTLP's AnyValue as JSON; bytes as base64 text, 64-bit integers past 2^53 as strings. */
function anyValue(v: unknown, depth: number): JsonValue {
  if (depth > MAX_VALUE_DEPTH) throw new ValueTooLarge(`nests deeper than ${MAX_VALUE_DEPTH}`);
  if (!isJsonObject(v as JsonValue)) return null;
  const o = v as JsonObject;
  if (typeof o['stringValue'] === 'string') {
    if (o['stringValue'].length > MAX_ATTRIBUTE_CHARS)
      throw new ValueTooLarge(
        `${(o['stringValue'].length / 2 ** 20).toFixed(0)} Mi characters, over the ${MAX_ATTRIBUTE_CHARS / 2 ** 20} Mi an attribute may hold`,
      );
    return o['stringValue'];
  }
  if ('boolValue' in o) return o['boolValue'] === true;
  if ('intValue' in o) {
    const n = Number(o['intValue']);
    return Number.isSafeInteger(n) ? n : String(o['intValue']);
  }
  if ('doubleValue' in o) {
    const n = Number(o['doubleValue']);
    return Number.isFinite(n) ? n : String(o['doubleValue']);
  }
  if ('bytesValue' in o) return typeof o['bytesValue'] === 'string' ? o['bytesValue'] : null;
  if (isJsonObject(o['arrayValue'])) {
    const values = list(o['arrayValue']['values']);
    if (values.length > MAX_PER_RECORD * 16)
      throw new ValueTooLarge(`an array of ${values.length} values`);
    return values.map((x) => anyValue(x, depth + 1));
  }
  if (isJsonObject(o['kvlistValue'])) {
    const out: JsonObject = {};
    const values = list(o['kvlistValue']['values']);
    if (values.length > MAX_PER_RECORD * 16)
      throw new ValueTooLarge(`a key-value list of ${values.length} entries`);
    for (const kv of values)
      if (isJsonObject(kv) && typeof kv['key'] === 'string')
        out[kv['key']] = anyValue(kv['value'], depth + 1);
    return out;
  }
  return null;
}
