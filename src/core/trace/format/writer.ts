import type { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../base/errors';
import { jsonLineKeysFirst } from '../../base/json';
import type { WriteRoot } from '../../base/writePath';
import { openForWrite, writeRootOf } from '../../base/writePath';
import type { NewTraceEvent, TraceEvent } from './schema';
import { TRACE_SCHEMA_VERSION } from './schema';
import { validateTraceEvent } from './validate';

/** Options of {@link TraceWriter}. */
export interface TraceWriterOptions {
  /** fdatasync every commit window before acknowledging its events (default true): an event acknowledged is an event kept. */
  durable?: boolean;
  /** Validate every event against the schema before writing it (default true). */
  validate?: boolean;
  /** The folder the trace must stay inside (default: the `.rehearsal` it lies in, else its own folder). */
  root?: WriteRoot;
}

// Header keys first, in a fixed order, so that a line's identity is readable from its first bytes.
const HEADER_KEYS = ['v', 'type', 'ts', 'runId', 'episodeId', 'turnId', 'callId', 'tool'] as const;

/** Serialises an event as one line: header keys first, then the rest in the given order. */
export function serializeTraceEvent(event: TraceEvent): string {
  return jsonLineKeysFirst(event, HEADER_KEYS);
}

/** An event's line waiting for its commit window, and the append it settles. */
interface PendingLine {
  line: Buffer;
  resolve: () => void;
  reject: (err: StudioError) => void;
}

/**
 * Appends events to a trace file, one JSON object per line, by group commit: the lines appended
 * while a commit is in progress (by every episode in flight) wait together, and the next commit
 * writes them with one write and one fdatasync. Events are written strictly in the order of their
 * `append`; each `append` resolves once its line is on disk (fdatasync), so nothing acknowledged is
 * lost in a crash, and a crash loses at most the lines of the commit window being written (its last
 * line may be torn). A lone event is committed at once (one microtask later), never held back for
 * company. Opening a file whose last line was torn by an earlier crash first ends that line, so the
 * torn fragment stays one skippable line and never corrupts the next event.
 */
export class TraceWriter {
  /** Lines appended since the commit in progress took its window, in order. */
  private pending: PendingLine[] = [];
  /** The commit loop while it runs; it ends when no line is pending. */
  private committing: Promise<void> | undefined;
  private failure: StudioError | undefined;
  private closed = false;
  private written = 0;
  private commits = 0;

  private constructor(
    readonly file: string,
    private readonly handle: fs.FileHandle,
    private readonly options: Required<Omit<TraceWriterOptions, 'root'>>,
    /** Bytes of whole lines in the file: a failed write is cut back to this. */
    private size: number,
  ) {}

  /**
   * Opens (creating folders and file as needed) a trace for appending, inside its root: a trace
   * whose folder leads out of the root through a link is refused (PATH_OUTSIDE_WORKSPACE).
   */
  static async open(file: string, options: TraceWriterOptions = {}): Promise<TraceWriter> {
    const root = options.root ?? writeRootOf(path.dirname(file));
    const handle = await openForWrite(root, file, 'a+');
    let size: number;
    try {
      size = (await handle.stat()).size;
      if (size > 0) {
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) {
          await handle.appendFile('\n');
          size++;
        }
      }
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
    return new TraceWriter(
      file,
      handle,
      { durable: options.durable ?? true, validate: options.validate ?? true },
      size,
    );
  }

  /** Number of events written by this writer. */
  get eventsWritten(): number {
    return this.written;
  }

  /** Number of commit windows written (each one write, and one fdatasync when durable). */
  get commitsWritten(): number {
    return this.commits;
  }

  /** Why writing failed (`TRACE_WRITE_FAILED`), once a write has failed; every later append fails with it. */
  get writeFailure(): StudioError | undefined {
    return this.failure;
  }

  /** Appends one event (adds `v` and `ts`); resolves when it is durably written. */
  append(event: NewTraceEvent): Promise<void> {
    if (this.closed)
      return Promise.reject(
        new StudioError(
          'TRACE_CLOSED',
          `The trace ${this.file} is closed; start a new run to record more events.`,
        ),
      );
    if (this.failure) return Promise.reject(this.failure);
    const full = {
      v: TRACE_SCHEMA_VERSION,
      ts: event.ts ?? new Date().toISOString(),
      ...event,
    } as TraceEvent;
    if (this.options.validate) {
      const checked = validateTraceEvent(full);
      if (!checked.ok)
        return Promise.reject(
          new StudioError(
            'INVALID_TRACE_EVENT',
            `Refusing to write an invalid ${full.type} event: ${checked.reason}`,
          ),
        );
    }
    const line = Buffer.from(serializeTraceEvent(full) + '\n', 'utf8');
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ line, resolve, reject });
      this.committing ??= this.commitWhilePending();
    });
  }

  /**
   * Commits window after window until no line is pending: each takes every line appended so far.
   * Started by the first append of an idle writer; one microtask later, so that the appends of the
   * same synchronous stretch share its first window.
   */
  private async commitWhilePending(): Promise<void> {
    await Promise.resolve();
    while (this.pending.length > 0) {
      const window = this.pending;
      this.pending = [];
      await this.commit(window);
    }
    this.committing = undefined;
  }

  /**
   * Writes one window's lines with one write and one fdatasync, then settles their appends. A
   * failed write (a full disk) rejects them, and every append after them, with TRACE_WRITE_FAILED.
   */
  private async commit(window: readonly PendingLine[]): Promise<void> {
    if (!this.failure) {
      const bytes = window.length === 1 ? window[0].line : Buffer.concat(window.map((p) => p.line));
      try {
        await this.handle.appendFile(bytes);
        if (this.options.durable) await this.handle.datasync();
        this.size += bytes.length;
        this.written += window.length;
        this.commits++;
        for (const p of window) p.resolve();
        return;
      } catch (err) {
        this.failure = new StudioError(
          'TRACE_WRITE_FAILED',
          `Could not write to ${this.file}: ${(err as Error).message}. Events already written are kept.`,
        );
        await this.cutTornLine();
      }
    }
    for (const p of window) p.reject(this.failure);
  }

  /**
   * A write that failed (a full disk) may have left part of its line: cut the file back to its whole
   * lines, so that the trace ends as if the event had never been written. Cutting frees space, so it
   * succeeds where the write did not; if it fails anyway, readers skip the torn line.
   */
  private async cutTornLine(): Promise<void> {
    try {
      await this.handle.truncate(this.size);
      if (this.options.durable) await this.handle.datasync();
    } catch {
      // The torn line stays; readers skip and count it.
    }
  }

  /** Waits for pending writes, then closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.committing;
    await this.handle.close();
  }
}
