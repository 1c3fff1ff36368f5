import type { AnnotationSet } from './annotationSet';
import type { Annotation } from './schema';
import { ANNOTATION_KIND_LABELS } from './schema';

/** A node of the Annotations view: a run with annotations, or one annotation. */
export interface AnnotationTreeNode {
  kind: 'run' | 'annotation';
  id: string;
  /** The run's trace file. */
  file: string;
  label: string;
  description: string;
  tooltip: string;
  annotation?: Annotation;
}

/** One run's annotations, as the view gets them. */
export interface AnnotatedRun {
  file: string;
  runId: string;
  set: AnnotationSet;
}

function countWords(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function runNode(run: AnnotatedRun): AnnotationTreeNode {
  const all = run.set.all();
  const errors = all.filter((a) => a.verdict === 'error').length;
  const accepted = all.length - errors;
  const parts = [countWords(errors, 'error'), ...(accepted ? [`${accepted} accepted`] : [])];
  if (run.set.skippedCount) parts.push(countWords(run.set.skippedCount, 'skipped line'));
  const tooltip = [
    run.runId,
    run.file,
    ...run.set.skipped.slice(0, 5).map((s) => `annotations.jsonl line ${s.line}: ${s.reason}`),
  ].join('\n');
  return {
    kind: 'run',
    id: `${run.file}#annotations`,
    file: run.file,
    label: run.runId,
    description: parts.join(' · '),
    tooltip,
  };
}

/** The node of one annotation: its kind (or acceptance), the call and path, severity and note. */
export function annotationNode(file: string, a: Annotation): AnnotationTreeNode {
  const label =
    a.verdict === 'acceptable' ? 'acceptable rehearsal' : ANNOTATION_KIND_LABELS[a.kind ?? 'other'];
  const where = [a.tool, a.callId].filter(Boolean).join(' ');
  const description = [
    where,
    a.path,
    a.severity,
    a.note ? `“${a.note.length > 60 ? a.note.slice(0, 59) + '…' : a.note}”` : undefined,
  ]
    .filter(Boolean)
    .join(' · ');
  const tooltip = [
    `${label}${a.severity ? ` (${a.severity})` : ''}`,
    `call ${a.callId}${a.tool ? ` (${a.tool})` : ''}${a.episodeId ? ` in episode ${a.episodeId}` : ''}`,
    ...(a.path ? [`path ${a.path}`] : []),
    ...(a.note ? [`note: ${a.note}`] : []),
    `by ${a.author} at ${a.createdAt}${a.updatedAt !== a.createdAt ? `; changed by ${a.updatedBy} at ${a.updatedAt}` : ''}`,
  ].join('\n');
  return {
    kind: 'annotation',
    id: `${file}#${a.id}`,
    file,
    label,
    description,
    tooltip,
    annotation: a,
  };
}

/**
 * Children in the Annotations view: runs with annotations (newest run first, as given), then each
 * run's annotations in call order, oldest first within a call.
 */
export function annotationTreeChildren(
  runs: readonly AnnotatedRun[],
  node?: AnnotationTreeNode,
): AnnotationTreeNode[] {
  if (!node) return runs.filter((r) => r.set.size > 0 || r.set.skippedCount > 0).map(runNode);
  if (node.kind !== 'run') return [];
  const run = runs.find((r) => r.file === node.file);
  if (!run) return [];
  return run.set
    .all()
    .map((a, order) => ({ a, order }))
    .sort((x, y) => compareCallIds(x.a.callId, y.a.callId) || x.order - y.order)
    .map(({ a }) => annotationNode(run.file, a));
}

/** The parent of a node: the run of an annotation. */
export function annotationTreeParent(
  runs: readonly AnnotatedRun[],
  node: AnnotationTreeNode,
): AnnotationTreeNode | undefined {
  if (node.kind === 'run') return undefined;
  const run = runs.find((r) => r.file === node.file);
  return run ? runNode(run) : undefined;
}

/** Orders call ids `e2.t10.c1` after `e2.t9.c1`: numbers compare as numbers. */
export function compareCallIds(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}
