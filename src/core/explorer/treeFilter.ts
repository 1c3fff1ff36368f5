import type { CallAnnotationSummary } from '../annotations/annotationSet';
import type { Annotation } from '../annotations/schema';
import { ANNOTATION_KIND_LABELS } from '../annotations/schema';
import type { CallEntry, EpisodeEntry, TurnEntry } from '../trace/index/entries';
import type { CallOutcome } from '../trace/index/callTable';

/** What the Trace Explorer shows; every criterion set must hold (they combine with "and"). */
export interface TreeFilter {
  /** Only calls whose rehearsal was scored and is not an exact match. */
  mismatches?: boolean;
  /** Only calls with at least one annotation. */
  annotated?: boolean;
  /** Only rehearsals that did not parse, and acts that did not parse. */
  parseErrors?: boolean;
  /** Only calls of these tools. */
  tools?: string[];
  /** Case-insensitive text: tool, ids, task, final answer, error codes, annotation kinds and notes. */
  text?: string;
}

/** How the Trace Explorer orders calls: as recorded (runs, episodes, turns), or least faithful first, flat under each run. */
export type TreeSort = 'trace' | 'fidelity';

/** The annotations of one trace, as the tree needs them (an `AnnotationSet` is one). */
export interface AnnotationLookup {
  summary(callId: string): CallAnnotationSummary | undefined;
  forCall(callId: string): Annotation[];
}

/** True when the filter hides anything. */
export function isFilterActive(filter: TreeFilter | undefined): boolean {
  return (
    !!filter &&
    !!(
      filter.mismatches ||
      filter.annotated ||
      filter.parseErrors ||
      filter.tools?.length ||
      filter.text?.trim()
    )
  );
}

/** The filter and sort in words, for the view's description: `mismatches · tool get_order_details · "pending"`. */
export function describeTreeState(
  filter: TreeFilter | undefined,
  sort: TreeSort = 'trace',
): string {
  const parts: string[] = [];
  if (filter?.mismatches) parts.push('mismatches');
  if (filter?.annotated) parts.push('annotated');
  if (filter?.parseErrors) parts.push('parse errors');
  if (filter?.tools?.length)
    parts.push(`${filter.tools.length === 1 ? 'tool' : 'tools'} ${filter.tools.join(', ')}`);
  if (filter?.text?.trim()) parts.push(`"${filter.text.trim()}"`);
  if (sort === 'fidelity') parts.push('least faithful first');
  return parts.join(' · ');
}

/**
 * How faithful a call's rehearsal was, lower is worse: a rehearsal that did not parse (-2), a tool
 * that gave no answer (-1), then field F1 (0..1); calls not compared (yet) come last (2).
 */
/** How a call's rehearsal went: exact, missed (did not parse, or scored and not exact), or not scored. */
export type RehearsalVerdict = 'right' | 'wrong' | 'none';

/** A call's rehearsal verdict (Compare Runs pairs them; Review Mismatches walks the wrong ones). */
export function rehearsalVerdict(call: CallOutcome): RehearsalVerdict {
  if (call.rehearsalError) return 'wrong';
  if (!call.scores) return 'none';
  return call.scores.exactMatch ? 'right' : 'wrong';
}

export function fidelityRank(call: CallOutcome): number {
  if (call.rehearsalError) return -2;
  if (call.actualError) return -1;
  if (call.scores) return call.scores.exactMatch ? 1 : call.scores.fieldF1;
  return 2;
}

function textMatches(query: string, fields: (string | undefined)[]): boolean {
  const q = query.trim().toLowerCase();
  return fields.some((f) => f !== undefined && f.toLowerCase().includes(q));
}

function annotationText(annotations: AnnotationLookup | undefined, callId: string): string[] {
  return (annotations?.forCall(callId) ?? []).flatMap((a) => [
    a.note,
    a.kind ? ANNOTATION_KIND_LABELS[a.kind] : 'acceptable',
    a.path ?? '',
  ]);
}

/** True when a call passes the filter. */
export function callMatches(
  filter: TreeFilter | undefined,
  call: CallEntry,
  episode: EpisodeEntry | undefined,
  turn: TurnEntry | undefined,
  annotations?: AnnotationLookup,
): boolean {
  if (!isFilterActive(filter)) return true;
  const f = filter!;
  if (f.mismatches && !(call.scores && !call.scores.exactMatch)) return false;
  if (f.annotated && !annotations?.summary(call.callId)) return false;
  if (f.parseErrors && !call.rehearsalError) return false;
  if (f.tools?.length && !f.tools.includes(call.tool)) return false;
  if (
    f.text?.trim() &&
    !textMatches(f.text, [
      call.tool,
      call.callId,
      call.rehearsalError,
      call.actualError,
      episode?.taskId,
      episode?.episodeId,
      turn?.answerPreview,
      turn?.parseError,
      ...annotationText(annotations, call.callId),
    ])
  )
    return false;
  return true;
}

/**
 * True when a turn passes the filter on its own (not through its calls): a turn has no fidelity,
 * tool or annotation, so only parse errors and text can select it.
 */
export function turnMatchesItself(
  filter: TreeFilter | undefined,
  turn: TurnEntry,
  episode: EpisodeEntry | undefined,
): boolean {
  if (!isFilterActive(filter)) return true;
  const f = filter!;
  if (f.mismatches || f.annotated || f.tools?.length) return false;
  if (f.parseErrors && turn.kind !== 'error') return false;
  if (
    f.text?.trim() &&
    !textMatches(f.text, [
      turn.turnId,
      turn.answerPreview,
      turn.parseError,
      episode?.taskId,
      episode?.episodeId,
    ])
  )
    return false;
  return true;
}
