/**
 * Fidelity annotations: a person's marks on calls, stored beside a run's trace in
 * `annotations.jsonl` (append-only; see docs/annotation-format.md and
 * schemas/annotation.schema.json). Edits and deletions are new events; readers fold them.
 */

/** The annotation schema version this studio writes (`v` on every event). */
export const ANNOTATION_SCHEMA_VERSION = 1;

/** Kinds of fidelity error, as stable snake_case codes. */
export const ANNOTATION_KINDS = [
  'hallucinated_value',
  'missing_field',
  'extra_field',
  'wrong_type',
  'wrong_error_state',
  'stale_state',
  'format_error',
  'other',
] as const;

/** A kind of fidelity error. */
export type AnnotationKind = (typeof ANNOTATION_KINDS)[number];

/** How people read each kind. */
export const ANNOTATION_KIND_LABELS: Record<AnnotationKind, string> = {
  hallucinated_value: 'hallucinated value',
  missing_field: 'missing field',
  extra_field: 'extra field',
  wrong_type: 'wrong type or schema',
  wrong_error_state: 'wrong error state',
  stale_state: 'stale state',
  format_error: 'format error',
  other: 'other',
};

/** What each kind means, for pickers and docs. */
export const ANNOTATION_KIND_DESCRIPTIONS: Record<AnnotationKind, string> = {
  hallucinated_value: 'the rehearsal states a value the tool did not return',
  missing_field: 'the tool returned a field the rehearsal left out',
  extra_field: 'the rehearsal invented a field the tool does not return',
  wrong_type: 'a value of the wrong JSON type, or a shape that breaks the tool’s schema',
  wrong_error_state: 'success predicted where the tool failed, or the other way round',
  stale_state: 'the rehearsal ignores what earlier calls of the episode changed',
  format_error: 'the rehearsal did not parse, or is not in the tool’s format',
  other: 'anything else (say what in the note)',
};

/** How much a fidelity error matters, least first. */
export const ANNOTATION_SEVERITIES = ['minor', 'major', 'critical'] as const;

/** A severity. */
export type AnnotationSeverity = (typeof ANNOTATION_SEVERITIES)[number];

/** What the severities mean. */
export const ANNOTATION_SEVERITY_DESCRIPTIONS: Record<AnnotationSeverity, string> = {
  minor: 'cosmetic: the episode would go on the same way',
  major: 'misleading: the agent could act differently on it',
  critical: 'the agent would fail the task on it',
};

/** Fields every annotation event carries. */
interface AnnotationEventBase {
  v: typeof ANNOTATION_SCHEMA_VERSION;
  /** When the event was written (ISO 8601). */
  ts: string;
  /** The annotation the event creates or changes. */
  id: string;
  /** Who wrote the event. */
  author: string;
}

/** Where an annotation points: a call of the trace, and optionally its episode and tool for readers without the trace. */
export interface AnnotationTarget {
  callId: string;
  episodeId?: string;
  tool?: string;
}

/** Marks a call (or one JSON path of its rehearsal) as a fidelity error. */
export interface MarkEvent extends AnnotationEventBase, AnnotationTarget {
  type: 'mark';
  kind: AnnotationKind;
  severity: AnnotationSeverity;
  /** JSONPath as fidelity diffs write it, e.g. `$.orders[0].status`; absent for the whole call. */
  path?: string;
  note?: string;
}

/** Marks a call's rehearsal as acceptable (differences, if any, do not matter). */
export interface AcceptEvent extends AnnotationEventBase, AnnotationTarget {
  type: 'accept';
  note?: string;
}

/** Changes fields of an earlier mark or accept (`path: null` removes the path). */
export interface EditEvent extends AnnotationEventBase {
  type: 'edit';
  changes: {
    kind?: AnnotationKind;
    severity?: AnnotationSeverity;
    path?: string | null;
    note?: string;
  };
}

/** Withdraws an earlier mark or accept. */
export interface DeleteEvent extends AnnotationEventBase {
  type: 'delete';
}

/** Any line of `annotations.jsonl`. */
export type AnnotationEvent = MarkEvent | AcceptEvent | EditEvent | DeleteEvent;

/** An event as a writer is given it: the writer adds `v` and `ts`. */
export type NewAnnotationEvent = AnnotationEvent extends infer E
  ? E extends AnnotationEvent
    ? Omit<E, 'v' | 'ts'> & { ts?: string }
    : never
  : never;

/** A person's verdict on a call: a fidelity error, or an acceptable rehearsal. */
export type AnnotationVerdict = 'error' | 'acceptable';

/** One annotation as it stands after every event about it was applied. */
export interface Annotation {
  id: string;
  callId: string;
  episodeId?: string;
  tool?: string;
  verdict: AnnotationVerdict;
  /** Set for errors. */
  kind?: AnnotationKind;
  /** Set for errors. */
  severity?: AnnotationSeverity;
  path?: string;
  note: string;
  /** Who created it, and when. */
  author: string;
  createdAt: string;
  /** When it last changed, and by whom (the creation when never edited). */
  updatedAt: string;
  updatedBy: string;
}

/** True for a known kind code. */
export function isAnnotationKind(value: unknown): value is AnnotationKind {
  return typeof value === 'string' && (ANNOTATION_KINDS as readonly string[]).includes(value);
}

/** True for a known severity. */
export function isAnnotationSeverity(value: unknown): value is AnnotationSeverity {
  return typeof value === 'string' && (ANNOTATION_SEVERITIES as readonly string[]).includes(value);
}

/** A one-line description of an annotation: `hallucinated value (major) at $.status`. */
export function describeAnnotation(a: Annotation): string {
  if (a.verdict === 'acceptable') return `acceptable rehearsal${a.note ? `: ${a.note}` : ''}`;
  const where = a.path ? ` at ${a.path}` : '';
  return `${ANNOTATION_KIND_LABELS[a.kind ?? 'other']} (${a.severity ?? 'major'})${where}`;
}
