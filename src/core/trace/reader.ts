import { promises as fs } from 'node:fs';
import { StudioError } from '../base/errors';
import type { RawLine, ReadLinesOptions } from './lineReader';
import { readLines } from './lineReader';
import type { TraceEvent } from './schema';
import { TRACE_SCHEMA_VERSION } from './schema';
import { validateTraceEvent } from './validate';

/** Where an event sits in its file. */
export interface EventLocation {
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line. */
  offset: number;
  /** Length of the line in bytes, without the newline. */
  length: number;
}

/** A line that was skipped, and why. */
export interface SkippedLine {
  line: number;
  offset: number;
  reason: string;
}

/** Outcome of decoding one line. */
export type DecodedLine = { ok: true; event: TraceEvent } | { ok: false; reason: string } | { ok: 'blank' };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Why an unterminated last line that is not a complete event is skipped. */
export const TORN_LAST_LINE = 'torn last line (incomplete write)';

/** Decodes one raw line into an event; never throws. */
export function decodeLine(raw: RawLine): DecodedLine {
  if (raw.oversized) return { ok: false, reason: `line too long (${raw.length} bytes)` };
  let text: string;
  try {
    text = utf8.decode(raw.bytes);
  } catch {
    return { ok: false, reason: 'invalid UTF-8' };
  }
  if (text.trim() === '') return { ok: 'blank' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: raw.terminated ? 'not valid JSON' : TORN_LAST_LINE };
  }
  const version = (value as { v?: unknown } | null)?.v;
  if (typeof version === 'number' && version > TRACE_SCHEMA_VERSION) {
    return { ok: false, reason: `written by a newer studio (trace schema v${version}); update Rehearsal Studio to read it` };
  }
  const checked = validateTraceEvent(value);
  return checked.ok ? { ok: true, event: checked.event } : { ok: false, reason: `not a valid event: ${checked.reason}` };
}

/** What a full read of a trace found. */
export interface TraceReadResult {
  events: number;
  skipped: SkippedLine[];
  bytes: number;
}

/** Options of {@link readTrace}. */
export interface ReadTraceOptions extends ReadLinesOptions {
  /** Called for every valid event, in file order. */
  onEvent?: (event: TraceEvent, location: EventLocation) => void;
}

/**
 * Streams a trace file: every valid event goes to `onEvent`; torn, corrupt or invalid lines are
 * skipped and counted with their line numbers, never fatal. Throws a coded error only when the file
 * itself cannot be read.
 */
export async function readTrace(file: string, options: ReadTraceOptions = {}): Promise<TraceReadResult> {
  const result: TraceReadResult = { events: 0, skipped: [], bytes: 0 };
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) throw new StudioError('TRACE_NOT_A_FILE', `${file} is not a file; pass a trace.jsonl file or a run folder.`);
    result.bytes = stat.size;
    for await (const raw of readLines(file, options)) {
      const decoded = decodeLine(raw);
      if (decoded.ok === 'blank') continue;
      if (decoded.ok) {
        result.events++;
        options.onEvent?.(decoded.event, { line: raw.line, offset: raw.offset, length: raw.length });
      } else {
        result.skipped.push({ line: raw.line, offset: raw.offset, reason: decoded.reason });
      }
    }
  } catch (err) {
    if (err instanceof StudioError) throw err;
    throw new StudioError('TRACE_UNREADABLE', `Cannot read trace ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}.`);
  }
  return result;
}

/** Reads every valid event of a trace into memory (small traces, tests, reports). */
export async function readTraceEvents(file: string): Promise<{ events: TraceEvent[]; skipped: SkippedLine[] }> {
  const events: TraceEvent[] = [];
  const { skipped } = await readTrace(file, { onEvent: (e) => events.push(e) });
  return { events, skipped };
}

/** Reads the single event at a known location without reading the rest of the file. */
export async function readEventAt(file: string, location: EventLocation): Promise<TraceEvent> {
  const handle = await fs.open(file, 'r');
  try {
    const bytes = Buffer.alloc(location.length);
    const { bytesRead } = await handle.read(bytes, 0, location.length, location.offset);
    const decoded = decodeLine({ line: location.line, offset: location.offset, bytes: bytes.subarray(0, bytesRead), length: bytesRead, terminated: true, oversized: false });
    if (decoded.ok === true) return decoded.event;
    throw new StudioError('TRACE_CHANGED', `Line ${location.line} of ${file} no longer holds the expected event (${decoded.ok === 'blank' ? 'blank' : decoded.reason}); refresh the trace.`);
  } finally {
    await handle.close();
  }
}
