import type { CallAnnotationSummary } from '../annotations/annotationSet';
import type { Annotation, AnnotationSeverity } from '../annotations/schema';
import type { RowAnnotation } from './datasetRow';

/**
 * Weight of a grounding row (the real response as the rehearse target) whose call a person marked
 * as a fidelity error, by the worst severity: the rehearse role is pushed harder toward what the
 * tool really returned where its rehearsal was judged wrong.
 */
export const GROUNDING_ERROR_WEIGHTS: Record<AnnotationSeverity, number> = {
  minor: 2,
  major: 3,
  critical: 4,
};

/**
 * The weight of a call's grounding row: 1 unless the call has a fidelity error, then
 * {@link GROUNDING_ERROR_WEIGHTS} of its worst severity. An accepted rehearsal keeps weight 1.
 */
export function groundingWeight(summary: CallAnnotationSummary | undefined): number {
  if (!summary || summary.errors === 0) return 1;
  return GROUNDING_ERROR_WEIGHTS[summary.worstSeverity ?? 'major'];
}

/** A call's annotations as a row carries them: the verdict and what the person said, no ids or times. */
export function rowAnnotations(annotations: readonly Annotation[]): RowAnnotation[] {
  return annotations.map((a) => ({
    verdict: a.verdict,
    ...(a.kind ? { kind: a.kind } : {}),
    ...(a.severity ? { severity: a.severity } : {}),
    ...(a.path ? { path: a.path } : {}),
    ...(a.note ? { note: a.note } : {}),
    author: a.author,
  }));
}
