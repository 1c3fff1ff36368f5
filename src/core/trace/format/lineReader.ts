import { createReadStream } from 'node:fs';

/** One line of a file, without its newline. */
export interface RawLine {
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Bytes of the line without the newline; empty when `oversized`. */
  bytes: Buffer;
  /** Length in bytes without the newline. */
  length: number;
  /** False for a last line with no newline after it (torn, or still being written). */
  terminated: boolean;
  /** The line was longer than the limit and was not kept in memory. */
  oversized: boolean;
}

/** Options of {@link readLines}. */
export interface ReadLinesOptions {
  /** Byte offset to start at (a line start); default 0. */
  start?: number;
  /** Line number of the first line read (when resuming); default 1. */
  firstLine?: number;
  /** Byte offset to stop before; default: end of file. */
  end?: number;
  /** Longest line kept in memory; longer lines are reported as `oversized`. Default 256 MiB. */
  maxLineBytes?: number;
}

/** Default longest line kept: a 10 MB tool response is legitimate, a 1 GB line is not. */
export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;

/**
 * Streams the lines of a file as bytes, splitting on `\n` only, with their byte offsets. Memory use
 * is bounded by the longest line (up to `maxLineBytes`), not by the file.
 */
export async function* readLines(
  file: string,
  options: ReadLinesOptions = {},
): AsyncGenerator<RawLine> {
  for await (const batch of readLineBatches(file, options)) yield* batch;
}

/** Most lines in one batch of {@link readLineBatches}. */
const MAX_BATCH_LINES = 4096;

/**
 * The lines of {@link readLines}, at most a read chunk's (or MAX_BATCH_LINES) worth at a time: for scans of large files, where
 * one await per line costs more than the work done on the line.
 */
export async function* readLineBatches(
  file: string,
  options: ReadLinesOptions = {},
): AsyncGenerator<RawLine[]> {
  const maxLine = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  let offset = options.start ?? 0;
  let lineNo = options.firstLine ?? 1;
  let parts: Buffer[] = [];
  let partBytes = 0;
  let oversized = false;
  // An empty range (an empty file, or nothing appended since the last scan) has no lines; a read
  // stream would reject it as out of range.
  if (options.end !== undefined && options.end <= offset) return;
  const stream = createReadStream(file, {
    start: offset,
    end: options.end !== undefined ? options.end - 1 : undefined,
    highWaterMark: 1 << 20,
  });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let batch: RawLine[] = [];
    let from = 0;
    while (from < chunk.length) {
      const nl = chunk.indexOf(0x0a, from);
      const stop = nl < 0 ? chunk.length : nl;
      if (!oversized) {
        if (partBytes + (stop - from) > maxLine) {
          oversized = true;
          parts = [];
        } else if (stop > from) parts.push(chunk.subarray(from, stop));
      }
      partBytes += stop - from;
      if (nl < 0) break;
      const bytes = oversized
        ? Buffer.alloc(0)
        : parts.length === 1
          ? parts[0]
          : Buffer.concat(parts, partBytes);
      batch.push({ line: lineNo++, offset, bytes, length: partBytes, terminated: true, oversized });
      offset += partBytes + 1;
      parts = [];
      partBytes = 0;
      oversized = false;
      from = nl + 1;
      // A chunk of a megabyte can hold half a million short lines, each a Buffer view and an object.
      if (batch.length >= MAX_BATCH_LINES) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length) yield batch;
  }
  if (partBytes > 0) {
    const bytes = oversized ? Buffer.alloc(0) : Buffer.concat(parts, partBytes);
    yield [{ line: lineNo, offset, bytes, length: partBytes, terminated: false, oversized }];
  }
}
