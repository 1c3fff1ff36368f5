import { promises as fs } from 'node:fs';
import { StudioError } from '../../base/errors';
import { decodeLine } from './reader';
import type { RunEndEvent, RunEvent } from './schema';

/** What the first and last lines of a trace say, read without indexing it. */
export interface TraceHead {
  file: string;
  /** File size when read. */
  size: number;
  /** The run event (the first line), if the first line is one. */
  run?: RunEvent;
  /** The run.end event, if the last complete line is one. */
  runEnd?: RunEndEvent;
  /** Why the first line is not a run event, if it is not. */
  problem?: string;
  /** False when the last line has no newline: still being written, or torn by a crash. */
  endsCleanly: boolean;
}

/** Longest first line looked at: a run event with its settings is a few kilobytes. */
const HEAD_BYTES = 1024 * 1024;
/** How much of the end is looked at for run.end. */
const TAIL_BYTES = 64 * 1024;

/**
 * Reads a trace's first line (its run event) and last lines (its run.end, if it ended), whatever
 * the file's size: what the Trace Explorer's first level shows before, or instead of, indexing.
 */
export async function readTraceHead(file: string): Promise<TraceHead> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    throw new StudioError(
      'TRACE_UNREADABLE',
      `Cannot read trace ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}.`,
    );
  }
  try {
    const { size } = await handle.stat();
    const head: TraceHead = { file, size, endsCleanly: true };
    const first = Buffer.alloc(Math.min(size, HEAD_BYTES));
    const { bytesRead } = await handle.read(first, 0, first.length, 0);
    const nl = first.subarray(0, bytesRead).indexOf(0x0a);
    const firstLine = first.subarray(0, nl < 0 ? bytesRead : nl);
    const decoded = decodeLine({
      line: 1,
      offset: 0,
      bytes: firstLine,
      length: firstLine.length,
      terminated: nl >= 0,
      oversized: nl < 0 && bytesRead === HEAD_BYTES,
    });
    if (decoded.ok === true && decoded.event.type === 'run') head.run = decoded.event;
    else
      head.problem =
        decoded.ok === true
          ? `the first line is a ${decoded.event.type} event, not a run event`
          : decoded.ok === 'blank'
            ? 'the first line is blank'
            : decoded.reason;
    if (size > 0) {
      const start = Math.max(0, size - TAIL_BYTES);
      const tail = Buffer.alloc(size - start);
      await handle.read(tail, 0, tail.length, start);
      // Only complete lines: a last line without its newline is still being written, or torn.
      const end = tail.lastIndexOf(0x0a);
      head.endsCleanly = end === tail.length - 1;
      if (end > 0) {
        const lineStart = tail.lastIndexOf(0x0a, end - 1) + 1;
        if (lineStart > 0 || start === 0) {
          const bytes = tail.subarray(lineStart, end);
          const last = decodeLine({
            line: 0,
            offset: start + lineStart,
            bytes,
            length: bytes.length,
            terminated: true,
            oversized: false,
          });
          if (last.ok === true && last.event.type === 'run.end') head.runEnd = last.event;
        }
      }
    }
    return head;
  } finally {
    await handle.close();
  }
}
