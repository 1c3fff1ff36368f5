/**
 * The codes of what `rehearse import otlp` could not take from its input, each with when it is
 * raised. They name a line, a trace or a span of the input, never a fault of the studio: the rest
 * of the input is imported. docs/otlp.md lists them (a unit test keeps it in step).
 */
export const OTLP_FAULT_CODES = {
  OTLP_LINE_NOT_JSON:
    'A line (or the whole document) is not JSON: the line is skipped; OTLP JSON is one ExportTraceServiceRequest or ExportLogsServiceRequest per line, or one document.',
  OTLP_NOT_OTLP: 'A JSON value holds neither resourceSpans nor resourceLogs: the line is skipped.',
  OTLP_SPAN_INVALID:
    'A span or log record is not an object, or its span id is not 8 bytes (16 hex digits): it is skipped.',
  OTLP_SPAN_NO_TRACE:
    'A span has no trace id (absent, all zero, or not 16 bytes): it belongs to no episode and is skipped.',
  OTLP_SPAN_DUPLICATE:
    'A span id appears twice in one trace (an exporter that retried): the first is kept, the copy skipped.',
  OTLP_PARENT_CYCLE:
    "A span's parent ids lead back to itself: the span is read as a root; the episode is still imported.",
  OTLP_ATTRIBUTE_TOO_LARGE:
    'An attribute, event body or nested value is larger or deeper than the import takes: that value is dropped and the span kept.',
  OTLP_MESSAGE_NOT_JSON:
    'A GenAI messages attribute, tool call arguments or tool definitions are not the JSON the conventions describe: that value is ignored.',
  OTLP_TOO_MANY:
    'The input holds more spans, log records, events or attributes than the import takes: the ones past the limit are skipped.',
  OTLP_NO_CONVERSATION:
    'A trace holds no GenAI messages with a user message (content capture off, or not a GenAI trace): it gives no episode.',
  OTLP_CONVERSATION_INVALID:
    "A trace's conversation cannot be replayed (a tool call with no answer, no tool call at all, a task that would not load): it gives no episode.",
  OTLP_PROTOBUF_INVALID:
    'A protobuf file (`.pb`, `.binpb`, `.protobuf`) does not decode as an ExportTraceServiceRequest or ExportLogsServiceRequest: the file is skipped.',
} as const;

/** One of {@link OTLP_FAULT_CODES}. */
export type OtlpFaultCode = keyof typeof OTLP_FAULT_CODES;

/** Something of the input that was not imported, or not all of it: where, and why. */
export interface OtlpFault {
  code: OtlpFaultCode;
  /** The input file. */
  file: string;
  /** 1-based line of the file (1 for a whole document). */
  line: number;
  traceId?: string;
  spanId?: string;
  message: string;
}
