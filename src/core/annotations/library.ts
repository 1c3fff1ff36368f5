import { Disposable } from '../base/disposable';
import { StudioError } from '../base/errors';
import { Emitter } from '../base/event';
import type { Event } from '../base/event';
import { isValidId } from '../trace/format/ids';
import type { AnnotationSet } from './annotationSet';
import type {
  Annotation,
  AnnotationKind,
  AnnotationSeverity,
  AnnotationTarget,
  EditEvent,
} from './schema';
import {
  annotationsFileFor,
  appendAnnotationEvent,
  newAnnotationId,
  readAnnotations,
} from './store';

/** What a person says when marking a call as a fidelity error. */
export interface MarkInput extends AnnotationTarget {
  kind: AnnotationKind;
  severity: AnnotationSeverity;
  path?: string;
  note?: string;
}

/**
 * The annotations of the runs a person looks at, one {@link AnnotationSet} per trace file, read
 * from `annotations.jsonl` beside it. Every change is appended as an event and then read back, so
 * what is shown is always what is on disk.
 */
export class AnnotationLibrary extends Disposable {
  private readonly sets = new Map<string, AnnotationSet>();
  private readonly changed = this._register(new Emitter<string>());

  /** Fires with the trace file whose annotations changed. */
  readonly onDidChange: Event<string> = this.changed.event;

  /** `author` names whoever writes the events (a setting, or the OS user). */
  constructor(private readonly author: () => string) {
    super();
  }

  /** Trace files whose annotations have been read. */
  get files(): string[] {
    return [...this.sets.keys()];
  }

  /** The annotations of a trace, if read already. */
  get(traceFile: string): AnnotationSet | undefined {
    return this.sets.get(traceFile);
  }

  /** Reads (again) the annotations of a trace, and says when they changed. */
  async load(traceFile: string): Promise<AnnotationSet> {
    const set = await readAnnotations(annotationsFileFor(traceFile));
    const before = this.sets.get(traceFile);
    this.sets.set(traceFile, set);
    if (!before || fingerprint(before) !== fingerprint(set)) this.changed.fire(traceFile);
    return set;
  }

  /** The annotations of a trace, reading them on first use. */
  async ensure(traceFile: string): Promise<AnnotationSet> {
    return this.sets.get(traceFile) ?? this.load(traceFile);
  }

  /** Forgets a trace (its run was deleted). */
  forget(traceFile: string): void {
    if (this.sets.delete(traceFile)) this.changed.fire(traceFile);
  }

  /** Marks a call, or one JSON path of it, as a fidelity error. */
  async mark(traceFile: string, input: MarkInput): Promise<Annotation> {
    assertCall(input.callId);
    const id = newAnnotationId();
    await appendAnnotationEvent(annotationsFileFor(traceFile), {
      type: 'mark',
      id,
      author: this.author(),
      callId: input.callId,
      kind: input.kind,
      severity: input.severity,
      ...target(input),
      ...(input.path ? { path: input.path } : {}),
      ...(input.note ? { note: input.note } : {}),
    });
    return this.created(traceFile, id);
  }

  /** Marks a call's rehearsal as acceptable. */
  async accept(
    traceFile: string,
    input: AnnotationTarget & { note?: string },
  ): Promise<Annotation> {
    assertCall(input.callId);
    const id = newAnnotationId();
    await appendAnnotationEvent(annotationsFileFor(traceFile), {
      type: 'accept',
      id,
      author: this.author(),
      callId: input.callId,
      ...target(input),
      ...(input.note ? { note: input.note } : {}),
    });
    return this.created(traceFile, id);
  }

  /** Changes an annotation (an `edit` event). */
  async edit(traceFile: string, id: string, changes: EditEvent['changes']): Promise<void> {
    await this.known(traceFile, id);
    await appendAnnotationEvent(annotationsFileFor(traceFile), {
      type: 'edit',
      id,
      author: this.author(),
      changes,
    });
    await this.load(traceFile);
  }

  /** Withdraws an annotation (a `delete` event). */
  async delete(traceFile: string, id: string): Promise<void> {
    await this.known(traceFile, id);
    await appendAnnotationEvent(annotationsFileFor(traceFile), {
      type: 'delete',
      id,
      author: this.author(),
    });
    await this.load(traceFile);
  }

  private async created(traceFile: string, id: string): Promise<Annotation> {
    const set = await this.load(traceFile);
    const a = set.get(id);
    if (!a)
      throw new StudioError(
        'ANNOTATION_LOST',
        `The annotation ${id} was written but does not read back from ${annotationsFileFor(traceFile)}; check that file.`,
      );
    return a;
  }

  private async known(traceFile: string, id: string): Promise<void> {
    const set = await this.ensure(traceFile);
    if (!set.get(id))
      throw new StudioError(
        'UNKNOWN_ANNOTATION',
        `No annotation ${id} on this run (it may have been deleted); refresh and try again.`,
      );
  }
}

function target(t: AnnotationTarget): Partial<AnnotationTarget> {
  return {
    ...(t.episodeId ? { episodeId: t.episodeId } : {}),
    ...(t.tool ? { tool: t.tool } : {}),
  };
}

function assertCall(callId: string): void {
  if (!isValidId(callId))
    throw new StudioError('INVALID_ID', `Invalid call id ${JSON.stringify(callId)}.`);
}

function fingerprint(set: AnnotationSet): string {
  return JSON.stringify([set.all(), set.skippedCount]);
}
