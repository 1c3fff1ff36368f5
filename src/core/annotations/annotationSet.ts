import type { SkippedLine } from '../trace/format/reader';
import { keepSkipped } from '../trace/format/reader';
import type { Annotation, AnnotationEvent, AnnotationSeverity } from './schema';
import { ANNOTATION_SEVERITIES } from './schema';

/** What a call's annotations add up to, for badges and filters. */
export interface CallAnnotationSummary {
  /** Fidelity errors marked on the call. */
  errors: number;
  /** The rehearsal was marked acceptable. */
  accepted: boolean;
  /** The worst severity among the errors. */
  worstSeverity?: AnnotationSeverity;
}

/**
 * The annotations of one run as they stand: every `mark` and `accept` with the `edit`s applied
 * and the `delete`d ones gone, in the order they were made. Read by call id
 * ({@link AnnotationSet.forCall}): the dataset export weighs grounding rows with it.
 */
export class AnnotationSet {
  private readonly byId = new Map<string, Annotation>();
  private readonly deleted = new Set<string>();
  /** Lines that were not applied (torn, invalid, or about an annotation that does not exist), with why. */
  readonly skipped: SkippedLine[] = [];
  /** Every line not applied, counted; `skipped` keeps the first MAX_SKIPPED_KEPT with their reasons. */
  skippedCount = 0;

  /** Notes a line that was not applied. */
  skip(line: SkippedLine): void {
    this.skippedCount++;
    keepSkipped(this.skipped, line);
  }

  /** Every current annotation, oldest first. */
  all(): Annotation[] {
    return [...this.byId.values()];
  }

  /** Number of current annotations. */
  get size(): number {
    return this.byId.size;
  }

  /** One annotation by its id. */
  get(id: string): Annotation | undefined {
    return this.byId.get(id);
  }

  /** The annotations of one call, oldest first. */
  forCall(callId: string): Annotation[] {
    return this.all().filter((a) => a.callId === callId);
  }

  /** Ids of the calls that have at least one annotation. */
  annotatedCalls(): Set<string> {
    return new Set(this.all().map((a) => a.callId));
  }

  /** Errors and acceptance of one call; undefined when it has no annotation. */
  summary(callId: string): CallAnnotationSummary | undefined {
    const list = this.forCall(callId);
    if (list.length === 0) return undefined;
    const errors = list.filter((a) => a.verdict === 'error');
    let worst: AnnotationSeverity | undefined;
    for (const e of errors)
      if (
        e.severity &&
        (!worst || ANNOTATION_SEVERITIES.indexOf(e.severity) > ANNOTATION_SEVERITIES.indexOf(worst))
      )
        worst = e.severity;
    return {
      errors: errors.length,
      accepted: list.some((a) => a.verdict === 'acceptable'),
      ...(worst ? { worstSeverity: worst } : {}),
    };
  }

  /**
   * Applies one event. Returns why it could not be applied (an edit of an unknown annotation, a
   * second mark with the same id), or undefined when it was.
   */
  apply(event: AnnotationEvent): string | undefined {
    switch (event.type) {
      case 'mark':
      case 'accept': {
        if (this.byId.has(event.id) || this.deleted.has(event.id))
          return `annotation ${event.id} already exists`;
        const a: Annotation = {
          id: event.id,
          callId: event.callId,
          verdict: event.type === 'mark' ? 'error' : 'acceptable',
          note: event.note ?? '',
          author: event.author,
          createdAt: event.ts,
          updatedAt: event.ts,
          updatedBy: event.author,
        };
        if (event.episodeId) a.episodeId = event.episodeId;
        if (event.tool) a.tool = event.tool;
        if (event.type === 'mark') {
          a.kind = event.kind;
          a.severity = event.severity;
          if (event.path) a.path = event.path;
        }
        this.byId.set(a.id, a);
        return undefined;
      }
      case 'edit': {
        const a = this.byId.get(event.id);
        if (!a) return `edit of unknown annotation ${event.id}`;
        const c = event.changes;
        if (
          a.verdict === 'acceptable' &&
          (c.kind !== undefined || c.severity !== undefined || c.path !== undefined)
        ) {
          return `an acceptance (${event.id}) has no kind, severity or path to edit`;
        }
        if (c.kind !== undefined) a.kind = c.kind;
        if (c.severity !== undefined) a.severity = c.severity;
        if (c.path === null) delete a.path;
        else if (c.path !== undefined) a.path = c.path;
        if (c.note !== undefined) a.note = c.note;
        a.updatedAt = event.ts;
        a.updatedBy = event.author;
        return undefined;
      }
      case 'delete': {
        if (!this.byId.delete(event.id)) return `delete of unknown annotation ${event.id}`;
        this.deleted.add(event.id);
        return undefined;
      }
    }
  }
}
