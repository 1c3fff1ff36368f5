import { promises as fs } from 'node:fs';
import { Disposable } from '../../base/disposable';
import { Emitter } from '../../base/event';
import type { Event } from '../../base/event';
import { errorMessage } from '../../base/errors';
import type { TraceHead } from '../format/traceHead';
import { readTraceHead } from '../format/traceHead';
import { TraceIndex } from './traceIndex';

/** Options of {@link TraceLibrary}. */
export interface TraceLibraryOptions {
  /**
   * Traces up to this size are indexed when added; larger ones only have their first and last lines
   * read until someone opens them ({@link TraceLibrary.ensureIndex}). Default 32 MiB.
   */
  eagerIndexBytes?: number;
}

/** Default size below which traces are indexed as soon as they are added. */
export const EAGER_INDEX_BYTES = 32 * 1024 * 1024;

/** How far the indexing of a large trace has got. */
export interface IndexingProgress {
  scannedBytes: number;
  totalBytes: number;
}

/**
 * The traces a person is looking at, each with its incrementally maintained index. Hosts (the
 * extension, tests) tell it which files exist and when they change; it says what changed.
 *
 * Large traces are lazy: adding one reads only its first and last lines (its {@link TraceHead}), so
 * that listing runs stays instant however big they are; the index is built on demand, in the
 * background, with progress.
 */
export class TraceLibrary extends Disposable {
  private readonly indexes = new Map<string, TraceIndex>();
  private readonly heads = new Map<string, TraceHead>();
  private readonly failures = new Map<string, string>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly indexing = new Map<
    string,
    { promise: Promise<TraceIndex | undefined>; progress: IndexingProgress }
  >();
  private readonly changed = this._register(new Emitter<string | undefined>());
  private readonly eagerIndexBytes: number;

  /** Fires with the file that changed, or undefined when the set of traces changed. */
  readonly onDidChange: Event<string | undefined> = this.changed.event;

  constructor(options: TraceLibraryOptions = {}) {
    super();
    this.eagerIndexBytes = options.eagerIndexBytes ?? EAGER_INDEX_BYTES;
  }

  /** Files in the library, in the order they were added. */
  get files(): string[] {
    return [...new Set([...this.indexes.keys(), ...this.heads.keys(), ...this.failures.keys()])];
  }

  /** The index of a file, once built. */
  index(file: string): TraceIndex | undefined {
    return this.indexes.get(file);
  }

  /** The first and last lines of a large trace that is not indexed (yet). */
  head(file: string): TraceHead | undefined {
    return this.indexes.has(file) ? undefined : this.heads.get(file);
  }

  /** True for a large trace whose index has not been built. */
  isLazy(file: string): boolean {
    return !this.indexes.has(file) && this.heads.has(file);
  }

  /** Progress of a large trace being indexed, if it is. */
  indexingProgress(file: string): IndexingProgress | undefined {
    return this.indexing.get(file)?.progress;
  }

  /** Why a file could not be indexed, if it could not. */
  failure(file: string): string | undefined {
    return this.failures.get(file);
  }

  /** Adds (or refreshes) a trace file. */
  async add(file: string): Promise<void> {
    if (this.indexes.has(file)) return this.refresh(file);
    await this.serialize(file, async () => {
      try {
        const size = (await fs.stat(file)).size;
        if (size > this.eagerIndexBytes && !this.indexes.has(file)) {
          this.heads.set(file, await readTraceHead(file));
        } else {
          this.indexes.set(file, await TraceIndex.open(file));
          this.heads.delete(file);
        }
        this.failures.delete(file);
      } catch (err) {
        this.failures.set(file, errorMessage(err));
        this.heads.delete(file);
      }
    });
    this.changed.fire(undefined);
  }

  /**
   * The index of a trace, building it if it is lazy. Concurrent calls share one build; progress is
   * reported through {@link indexingProgress} and `onDidChange(file)`.
   */
  /** The index of a trace, built when it is not yet; an error saying why when the trace cannot be read. */
  async requireIndex(file: string): Promise<TraceIndex> {
    const index = this.indexes.get(file) ?? (await this.ensureIndex(file));
    if (!index) throw new Error(this.failure(file) ?? `cannot read ${file}`);
    return index;
  }

  ensureIndex(file: string): Promise<TraceIndex | undefined> {
    const known = this.indexes.get(file);
    if (known) return Promise.resolve(known);
    const running = this.indexing.get(file);
    if (running) return running.promise;
    const progress: IndexingProgress = {
      scannedBytes: 0,
      totalBytes: this.heads.get(file)?.size ?? 0,
    };
    let lastPercent = -1;
    const promise = (async () => {
      let built: TraceIndex | undefined;
      await this.serialize(file, async () => {
        try {
          built = await TraceIndex.open(file, {
            onProgress: (scanned, total) => {
              progress.scannedBytes = scanned;
              progress.totalBytes = total;
              const percent = Math.floor((100 * scanned) / Math.max(1, total));
              if (percent >= lastPercent + 5) {
                lastPercent = percent;
                this.changed.fire(file);
              }
            },
          });
          this.indexes.set(file, built);
          this.heads.delete(file);
          this.failures.delete(file);
        } catch (err) {
          this.failures.set(file, errorMessage(err));
          this.heads.delete(file);
        }
      });
      this.indexing.delete(file);
      this.changed.fire(file);
      return built;
    })();
    this.indexing.set(file, { promise, progress });
    return promise;
  }

  /** Reads what was appended to a trace since the last scan (only its last lines, when lazy). */
  async refresh(file: string): Promise<void> {
    const index = this.indexes.get(file);
    if (!index) {
      if (this.indexing.has(file)) return;
      if (this.heads.has(file)) return this.refreshHead(file);
      return this.add(file);
    }
    let grew = false;
    await this.serialize(file, async () => {
      try {
        grew = await index.refresh();
      } catch (err) {
        this.indexes.delete(file);
        this.failures.set(file, errorMessage(err));
        grew = true;
      }
    });
    if (grew) this.changed.fire(file);
  }

  /** Forgets a trace (its file was deleted). */
  remove(file: string): void {
    const known = [
      this.indexes.delete(file),
      this.heads.delete(file),
      this.failures.delete(file),
    ].some(Boolean);
    if (known) this.changed.fire(undefined);
  }

  /** Replaces the whole set of files, keeping the indexes of those that stay. */
  async setFiles(files: readonly string[]): Promise<void> {
    const wanted = new Set(files);
    let removed = false;
    for (const f of this.files)
      if (!wanted.has(f)) {
        this.indexes.delete(f);
        this.heads.delete(f);
        this.failures.delete(f);
        removed = true;
      }
    await Promise.all(files.map((f) => this.add(f)));
    if (removed) this.changed.fire(undefined);
  }

  private async refreshHead(file: string): Promise<void> {
    const before = this.heads.get(file);
    let after: TraceHead | undefined;
    await this.serialize(file, async () => {
      try {
        after = await readTraceHead(file);
        if (!this.indexes.has(file)) this.heads.set(file, after);
      } catch (err) {
        this.heads.delete(file);
        this.failures.set(file, errorMessage(err));
      }
    });
    if (!after || before?.size !== after.size) this.changed.fire(file);
  }

  // One scan per file at a time: refreshes queue behind each other instead of racing.
  private async serialize(file: string, work: () => Promise<void>): Promise<void> {
    const previous = this.inFlight.get(file) ?? Promise.resolve();
    const next = previous.then(work, work);
    this.inFlight.set(file, next);
    try {
      await next;
    } finally {
      if (this.inFlight.get(file) === next) this.inFlight.delete(file);
    }
  }
}
