import { promises as fs } from 'node:fs';
import { StudioError } from '../../base/errors';
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

/**
 * How many skipped lines a read keeps with their reasons; every one is counted. A damaged file of
 * millions of bad lines would otherwise hold each in memory (5M lines: 1.35 GB, and `--json` could
 * not write them), and nobody reads past the first few.
 */
export const MAX_SKIPPED_KEPT = 1000;

/** Keeps a skipped line when fewer than {@link MAX_SKIPPED_KEPT} are kept; the caller counts it. */
export function keepSkipped(kept: SkippedLine[], line: SkippedLine): void {
  if (kept.length < MAX_SKIPPED_KEPT) kept.push(line);
}

/** Outcome of decoding one line. */
export type DecodedLine =
  { ok: true; event: TraceEvent } | { ok: false; reason: string } | { ok: 'blank' };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Why an unterminated last line that is not a complete event is skipped. */
export const TORN_LAST_LINE = 'torn last line (incomplete write)';

const JSON_SPACE = new Set([0x20, 0x09, 0x0d, 0x0a]);
/** Bytes a JSON value may start with, other than `{`: these lines go through the parser, for its reason. */
const OTHER_JSON_STARTS = new Set([...'["-0123456789tfn'].map((ch) => ch.charCodeAt(0)));

/**
 * True when the bytes are certainly not a JSON object: the first byte after JSON whitespace is ASCII
 * and cannot start a JSON value, or it is `{` and the last is not `}`. Such lines (garbage, torn
 * writes) are refused without `JSON.parse`, whose exception costs about 4 µs: a file of millions
 * of them took 26 s. Anything else, blank and non-ASCII starts included, takes the full path.
 */
export function cannotBeJsonObject(bytes: Uint8Array): boolean {
  let start = 0;
  let end = bytes.length - 1;
  while (start <= end && JSON_SPACE.has(bytes[start])) start++;
  if (start > end) return false;
  const first = bytes[start];
  if (first === 0x7b) {
    while (end > start && JSON_SPACE.has(bytes[end])) end--;
    return bytes[end] !== 0x7d;
  }
  return first < 0x80 && first > 0x20 && !OTHER_JSON_STARTS.has(first);
}

/** Decodes one raw line into an event; never throws. */
export function decodeLine(raw: RawLine): DecodedLine {
  if (raw.oversized) return { ok: false, reason: `line too long (${raw.length} bytes)` };
  if (cannotBeJsonObject(raw.bytes))
    return { ok: false, reason: raw.terminated ? 'not valid JSON' : TORN_LAST_LINE };
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
    return {
      ok: false,
      reason: `written by a newer studio (trace schema v${version}); update Rehearsal Studio to read it`,
    };
  }
  const checked = validateTraceEvent(value);
  return checked.ok
    ? { ok: true, event: checked.event }
    : { ok: false, reason: `not a valid event: ${checked.reason}` };
}

/** What a full read of a trace found. */
export interface TraceReadResult {
  events: number;
  /** The first {@link MAX_SKIPPED_KEPT} skipped lines, in file order. */
  skipped: SkippedLine[];
  /** Every skipped line, counted. */
  skippedCount: number;
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
export async function readTrace(
  file: string,
  options: ReadTraceOptions = {},
): Promise<TraceReadResult> {
  const result: TraceReadResult = { events: 0, skipped: [], skippedCount: 0, bytes: 0 };
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile())
      throw new StudioError(
        'TRACE_NOT_A_FILE',
        `${file} is not a file; pass a trace.jsonl file or a run folder.`,
      );
    result.bytes = stat.size;
    for await (const raw of readLines(file, options)) {
      const decoded = decodeLine(raw);
      if (decoded.ok === 'blank') continue;
      if (decoded.ok) {
        result.events++;
        options.onEvent?.(decoded.event, {
          line: raw.line,
          offset: raw.offset,
          length: raw.length,
        });
      } else {
        result.skippedCount++;
        keepSkipped(result.skipped, { line: raw.line, offset: raw.offset, reason: decoded.reason });
      }
    }
  } catch (err) {
    if (err instanceof StudioError) throw err;
    throw new StudioError(
      'TRACE_UNREADABLE',
      `Cannot read trace ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}.`,
    );
  }
  return result;
}

/** Reads every valid event of a trace into memory (small traces, tests, reports). */
export async function readTraceEvents(
  file: string,
): Promise<{ events: TraceEvent[]; skipped: SkippedLine[]; skippedCount: number }> {
  const events: TraceEvent[] = [];
  const { skipped, skippedCount } = await readTrace(file, { onEvent: (e) => events.push(e) });
  return { events, skipped, skippedCount };
}

/** Reads the single event at a known location without reading the rest of the file. */
export async function readEventAt(file: string, location: EventLocation): Promise<TraceEvent> {
  const handle = await fs.open(file, 'r');
  try {
    const bytes = Buffer.alloc(location.length);
    const { bytesRead } = await handle.read(bytes, 0, location.length, location.offset);
    const decoded = decodeLine({
      line: location.line,
      offset: location.offset,
      bytes: bytes.subarray(0, bytesRead),
      length: bytesRead,
      terminated: true,
      oversized: false,
    });
    if (decoded.ok === true) return decoded.event;
    throw new StudioError(
      'TRACE_CHANGED',
      `Line ${location.line} of ${file} no longer holds the expected event (${decoded.ok === 'blank' ? 'blank' : decoded.reason}); refresh the trace.`,
    );
  } finally {
    await handle.close();
  }
}
