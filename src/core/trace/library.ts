import { Disposable } from '../base/disposable';
import { Emitter } from '../base/event';
import type { Event } from '../base/event';
import { errorMessage } from '../base/errors';
import { TraceIndex } from './traceIndex';

/**
 * The traces a person is looking at, each with its incrementally maintained index. Hosts (the
 * extension, tests) tell it which files exist and when they change; it says what changed.
 */
export class TraceLibrary extends Disposable {
  private readonly indexes = new Map<string, TraceIndex>();
  private readonly failures = new Map<string, string>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly changed = this._register(new Emitter<string | undefined>());

  /** Fires with the file that changed, or undefined when the set of traces changed. */
  readonly onDidChange: Event<string | undefined> = this.changed.event;

  /** Files in the library, in the order they were added. */
  get files(): string[] {
    return [...new Set([...this.indexes.keys(), ...this.failures.keys()])];
  }

  /** The index of a file, once built. */
  index(file: string): TraceIndex | undefined {
    return this.indexes.get(file);
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
        this.indexes.set(file, await TraceIndex.build(file));
        this.failures.delete(file);
      } catch (err) {
        this.failures.set(file, errorMessage(err));
      }
    });
    this.changed.fire(undefined);
  }

  /** Reads what was appended to a trace since the last scan. */
  async refresh(file: string): Promise<void> {
    const index = this.indexes.get(file);
    if (!index) return this.add(file);
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
    const known = this.indexes.delete(file) || this.failures.delete(file);
    if (known) this.changed.fire(undefined);
  }

  /** Replaces the whole set of files, keeping the indexes of those that stay. */
  async setFiles(files: readonly string[]): Promise<void> {
    const wanted = new Set(files);
    let removed = false;
    for (const f of this.files) if (!wanted.has(f)) { this.indexes.delete(f); this.failures.delete(f); removed = true; }
    await Promise.all(files.map((f) => this.add(f)));
    if (removed) this.changed.fire(undefined);
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
