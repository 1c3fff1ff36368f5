import { Reader, Root } from 'protobufjs/light';
import type { IField, Type } from 'protobufjs/light';
import type { JsonObject } from '../base/json';
import type { OtlpData } from './otlpJson';
import { readOtlpRequest } from './otlpJson';

/** Which OTLP export request: spans (`/v1/traces`) or log records (`/v1/logs`). */
export type OtlpSignal = 'traces' | 'logs';

/** A field: its number, its type, and whether it repeats. */
type Field = [id: number, type: string, repeated?: 'repeated'];

function message(fields: Record<string, Field>): { fields: Record<string, IField> } {
  const out: Record<string, IField> = {};
  for (const [name, [id, type, rule]] of Object.entries(fields))
    out[name] = { id, type, ...(rule ? { rule } : {}) };
  return { fields: out };
}

/**
 * The OTLP messages the importer reads (opentelemetry-proto, v1: common, resource, trace, logs and
 * their collector service requests and responses), with the spec's field numbers. Field names are
 * the JSON mapping's (lowerCamelCase), so a decoded message is the OTLP JSON the reader consumes.
 * Fields the importer does not read (schema URLs, dropped counts, flags, links' trace state) are
 * declared too where the spec has them, so nothing decodes as a wrong type.
 */
const SCHEMA = {
  nested: {
    AnyValue: {
      oneofs: {
        value: {
          oneof: [
            'stringValue',
            'boolValue',
            'intValue',
            'doubleValue',
            'arrayValue',
            'kvlistValue',
            'bytesValue',
          ],
        },
      },
      ...message({
        stringValue: [1, 'string'],
        boolValue: [2, 'bool'],
        intValue: [3, 'int64'],
        doubleValue: [4, 'double'],
        arrayValue: [5, 'ArrayValue'],
        kvlistValue: [6, 'KeyValueList'],
        bytesValue: [7, 'bytes'],
      }),
    },
    ArrayValue: message({ values: [1, 'AnyValue', 'repeated'] }),
    KeyValueList: message({ values: [1, 'KeyValue', 'repeated'] }),
    KeyValue: message({ key: [1, 'string'], value: [2, 'AnyValue'] }),
    InstrumentationScope: message({
      name: [1, 'string'],
      version: [2, 'string'],
      attributes: [3, 'KeyValue', 'repeated'],
      droppedAttributesCount: [4, 'uint32'],
    }),
    Resource: message({
      attributes: [1, 'KeyValue', 'repeated'],
      droppedAttributesCount: [2, 'uint32'],
    }),
    Status: message({ message: [2, 'string'], code: [3, 'int32'] }),
    Event: message({
      timeUnixNano: [1, 'fixed64'],
      name: [2, 'string'],
      attributes: [3, 'KeyValue', 'repeated'],
      droppedAttributesCount: [4, 'uint32'],
    }),
    Link: message({
      traceId: [1, 'bytes'],
      spanId: [2, 'bytes'],
      traceState: [3, 'string'],
      attributes: [4, 'KeyValue', 'repeated'],
      droppedAttributesCount: [5, 'uint32'],
      flags: [6, 'fixed32'],
    }),
    Span: message({
      traceId: [1, 'bytes'],
      spanId: [2, 'bytes'],
      traceState: [3, 'string'],
      parentSpanId: [4, 'bytes'],
      name: [5, 'string'],
      kind: [6, 'int32'],
      startTimeUnixNano: [7, 'fixed64'],
      endTimeUnixNano: [8, 'fixed64'],
      attributes: [9, 'KeyValue', 'repeated'],
      droppedAttributesCount: [10, 'uint32'],
      events: [11, 'Event', 'repeated'],
      droppedEventsCount: [12, 'uint32'],
      links: [13, 'Link', 'repeated'],
      droppedLinksCount: [14, 'uint32'],
      status: [15, 'Status'],
      flags: [16, 'fixed32'],
    }),
    ScopeSpans: message({
      scope: [1, 'InstrumentationScope'],
      spans: [2, 'Span', 'repeated'],
      schemaUrl: [3, 'string'],
    }),
    ResourceSpans: message({
      resource: [1, 'Resource'],
      scopeSpans: [2, 'ScopeSpans', 'repeated'],
      schemaUrl: [3, 'string'],
    }),
    ExportTraceServiceRequest: message({ resourceSpans: [1, 'ResourceSpans', 'repeated'] }),
    LogRecord: message({
      timeUnixNano: [1, 'fixed64'],
      severityNumber: [2, 'int32'],
      severityText: [3, 'string'],
      body: [5, 'AnyValue'],
      attributes: [6, 'KeyValue', 'repeated'],
      droppedAttributesCount: [7, 'uint32'],
      flags: [8, 'fixed32'],
      traceId: [9, 'bytes'],
      spanId: [10, 'bytes'],
      observedTimeUnixNano: [11, 'fixed64'],
      eventName: [12, 'string'],
    }),
    ScopeLogs: message({
      scope: [1, 'InstrumentationScope'],
      logRecords: [2, 'LogRecord', 'repeated'],
      schemaUrl: [3, 'string'],
    }),
    ResourceLogs: message({
      resource: [1, 'Resource'],
      scopeLogs: [2, 'ScopeLogs', 'repeated'],
      schemaUrl: [3, 'string'],
    }),
    ExportLogsServiceRequest: message({ resourceLogs: [1, 'ResourceLogs', 'repeated'] }),
    // Both responses' only field is partial_success (1), absent when all was accepted.
    ExportTraceServiceResponse: message({}),
    ExportLogsServiceResponse: message({}),
    // google.rpc.Status: an OTLP/HTTP error response's body.
    RpcStatus: message({ code: [1, 'int32'], message: [2, 'string'] }),
  },
};

const root = Root.fromJSON(SCHEMA);
const REQUEST: Record<OtlpSignal, Type> = {
  traces: root.lookupType('ExportTraceServiceRequest'),
  logs: root.lookupType('ExportLogsServiceRequest'),
};
const RESPONSE: Record<OtlpSignal, Type> = {
  traces: root.lookupType('ExportTraceServiceResponse'),
  logs: root.lookupType('ExportLogsServiceResponse'),
};

/** Fields holding trace or span ids: hex in OTLP JSON, bytes in protobuf. */
const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** A body that is not an OTLP protobuf request. */
export class OtlpProtobufError extends Error {}

/**
 * Which request a protobuf body holds, read from its wire format: the first span or log record's
 * first field (a span's fields 1 and 2 are its ids, bytes; a log record's field 1 is its time,
 * fixed64). A request with no record is read as traces (it gives nothing either way).
 */
export function otlpSignalOf(bytes: Uint8Array): OtlpSignal {
  let body: Uint8Array | undefined = bytes;
  // Request → Resource* (field 1) → Scope* (field 2) → record (field 2).
  for (const field of [1, 2, 2]) {
    body = body && firstField(body, field);
    if (!body) return 'traces';
  }
  const r = Reader.create(body);
  while (r.pos < r.len) {
    const tag = r.uint32();
    const id = tag >>> 3;
    if (id === 1 || id === 2) return (tag & 7) === 2 ? 'traces' : 'logs';
    if (id >= 9) return 'logs';
    r.skipType(tag & 7);
  }
  return 'traces';
}

/** The first length-delimited field `id` of a message, or undefined; throws on a broken body. */
function firstField(bytes: Uint8Array, id: number): Uint8Array | undefined {
  const r = Reader.create(bytes);
  try {
    while (r.pos < r.len) {
      const tag = r.uint32();
      if (tag >>> 3 === id && (tag & 7) === 2) return r.bytes();
      r.skipType(tag & 7);
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * An OTLP protobuf export request as the OTLP JSON the JSON reader consumes: ids as hex, 64-bit
 * integers as decimal strings, bytes values as base64, enums as integers. `signal` defaults to what
 * the body's wire format says ({@link otlpSignalOf}). Throws {@link OtlpProtobufError} when the
 * body does not decode.
 */
export function decodeOtlpProtobuf(bytes: Uint8Array, signal?: OtlpSignal): JsonObject {
  const type = REQUEST[signal ?? otlpSignalOf(bytes)];
  let decoded;
  try {
    decoded = type.decode(bytes);
  } catch (err) {
    throw new OtlpProtobufError(
      `not an OTLP ${type.name}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const json = type.toObject(decoded, { longs: String, bytes: String, enums: Number });
  return hexIds(json);
}

/** A decoded request's span and log record ids (and their links'), base64 to hex, in place. */
function hexIds(request: Record<string, unknown>): JsonObject {
  const each = (v: unknown, key: string, fn: (x: Record<string, unknown>) => void) => {
    const list = (v as Record<string, unknown> | undefined)?.[key];
    if (Array.isArray(list)) for (const x of list) fn(x as Record<string, unknown>);
  };
  const ids = (record: Record<string, unknown>) => {
    for (const k of ID_FIELDS)
      if (typeof record[k] === 'string')
        record[k] = Buffer.from(record[k], 'base64').toString('hex');
    each(record, 'links', ids);
  };
  each(request, 'resourceSpans', (r) => each(r, 'scopeSpans', (s) => each(s, 'spans', ids)));
  each(request, 'resourceLogs', (r) => each(r, 'scopeLogs', (s) => each(s, 'logRecords', ids)));
  return request as JsonObject;
}

/**
 * An OTLP JSON request (ids as hex) encoded as protobuf, as an exporter sends it: for tests, the
 * bench, and anything that sends OTLP protobuf of its own.
 */
export function encodeOtlpProtobuf(request: JsonObject, signal: OtlpSignal): Uint8Array {
  const type = REQUEST[signal];
  return type.encode(type.fromObject(idBytes(request) as Record<string, unknown>)).finish();
}

function idBytes(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(idBytes);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>))
    out[k] =
      ID_FIELDS.has(k) && typeof x === 'string' && /^[0-9a-fA-F]*$/.test(x)
        ? Buffer.from(x, 'hex')
        : idBytes(x);
  return out;
}

/** An OTLP/HTTP error response body (google.rpc.Status: a gRPC code and a message), as protobuf. */
export function otlpStatusProtobuf(code: number, message: string): Uint8Array {
  const type = root.lookupType('RpcStatus');
  return type.encode(type.create({ code, message })).finish();
}

/** The empty export response (all accepted) of a signal, as protobuf. */
export function otlpResponseProtobuf(signal: OtlpSignal): Uint8Array {
  return RESPONSE[signal].encode(RESPONSE[signal].create({})).finish();
}

/**
 * Reads an OTLP protobuf export request into `into` through the JSON reader (so both encodings
 * take one path), or records an `OTLP_PROTOBUF_INVALID` fault when it does not decode. Returns
 * whether it decoded.
 */
export function readOtlpProtobuf(
  bytes: Uint8Array,
  file: string,
  into: OtlpData,
  signal?: OtlpSignal,
): boolean {
  let request: JsonObject;
  try {
    request = decodeOtlpProtobuf(bytes, signal);
  } catch (err) {
    if (!(err instanceof OtlpProtobufError)) throw err;
    into.faults.push({ code: 'OTLP_PROTOBUF_INVALID', file, line: 1, message: err.message });
    return false;
  }
  readOtlpRequest(request, file, 1, into);
  return true;
}
