import type { OtlpFault } from './codes';
import type { OtlpData, OtlpEvent, OtlpSpan } from './otlpJson';

/** One OTLP trace: its spans by id, and the events of each span (span events and log records). */
export interface OtlpTrace {
  traceId: string;
  spans: OtlpSpan[];
  /** Span events and log records of each span id, in time order. */
  events: Map<string, OtlpEvent[]>;
  /** Where the trace starts in the input, for messages. */
  file: string;
  line: number;
  startNs: bigint;
}

/**
 * Groups spans and log records into traces, in the order they started. A span id seen twice in a
 * trace keeps its first copy; a span whose parent ids lead back to itself is reported (its episode
 * does not depend on the span tree, so it is still read). Faults go to `data.faults`.
 */
export function groupTraces(data: OtlpData): OtlpTrace[] {
  const traces = new Map<string, OtlpTrace>();
  const trace = (traceId: string, file: string, line: number): OtlpTrace => {
    let t = traces.get(traceId);
    if (!t) {
      t = { traceId, spans: [], events: new Map(), file, line, startNs: 0n };
      traces.set(traceId, t);
    }
    return t;
  };
  const seen = new Map<string, Map<string, OtlpSpan>>();
  for (const span of data.spans) {
    const t = trace(span.traceId, span.file, span.line);
    let ids = seen.get(span.traceId);
    if (!ids) seen.set(span.traceId, (ids = new Map()));
    if (ids.has(span.spanId)) {
      data.faults.push({
        code: 'OTLP_SPAN_DUPLICATE',
        file: span.file,
        line: span.line,
        traceId: span.traceId,
        spanId: span.spanId,
        message: `span ${span.spanId} appears again in trace ${span.traceId} (first on line ${ids.get(span.spanId)!.line}); the copy is skipped`,
      });
      continue;
    }
    ids.set(span.spanId, span);
    t.spans.push(span);
    if (span.events.length) t.events.set(span.spanId, span.events.slice());
    if (t.startNs === 0n || (span.startNs > 0n && span.startNs < t.startNs))
      t.startNs = span.startNs;
  }
  for (const log of data.logs) {
    const t = traces.get(log.traceId);
    // Log records of a trace with no span: the records alone are the conversation.
    const into = t ?? trace(log.traceId, log.file, log.line);
    const list = into.events.get(log.spanId);
    if (list) list.push(log);
    else into.events.set(log.spanId, [log]);
  }
  for (const t of traces.values()) {
    for (const list of t.events.values()) sortByTime(list);
    data.faults.push(...parentCycles(t, seen.get(t.traceId) ?? new Map()));
  }
  return [...traces.values()].sort((a, b) =>
    a.startNs !== b.startNs ? (a.startNs < b.startNs ? -1 : 1) : a.traceId < b.traceId ? -1 : 1,
  );
}

/** Stable sort by time: events written at the same nanosecond keep their order. */
function sortByTime(list: OtlpEvent[]): void {
  const order = new Map(list.map((e, i) => [e, i]));
  list.sort((a, b) =>
    a.timeNs !== b.timeNs ? (a.timeNs < b.timeNs ? -1 : 1) : order.get(a)! - order.get(b)!,
  );
}

/** One fault per span on a cycle of parent ids, found in one walk over the spans. */
function parentCycles(t: OtlpTrace, byId: Map<string, OtlpSpan>): OtlpFault[] {
  const state = new Map<string, 1 | 2>();
  const faults: OtlpFault[] = [];
  for (const start of t.spans) {
    const path: OtlpSpan[] = [];
    let span: OtlpSpan | undefined = start;
    while (span && !state.has(span.spanId)) {
      state.set(span.spanId, 1);
      path.push(span);
      span = span.parentSpanId ? byId.get(span.parentSpanId) : undefined;
    }
    if (span && state.get(span.spanId) === 1) {
      for (const s of path.slice(path.indexOf(span)))
        faults.push({
          code: 'OTLP_PARENT_CYCLE',
          file: s.file,
          line: s.line,
          traceId: t.traceId,
          spanId: s.spanId,
          message: `the parent ids of span ${s.spanId} lead back to it; it is read as a root`,
        });
    }
    for (const s of path) state.set(s.spanId, 2);
  }
  return faults;
}
