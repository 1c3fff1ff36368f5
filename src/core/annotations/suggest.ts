import type { DiffKind } from '../fidelity/structuralDiff';
import type { CallView } from '../trace/index/callView';
import type { AnnotationKind } from './schema';

/**
 * The kind of error a difference of a structural diff most likely is, to preselect in pickers:
 * a path only in the actual response was missed, one only in the rehearsal was invented, another
 * JSON type is a type error, another value is a hallucinated value.
 */
export function suggestedKind(diff: DiffKind | undefined): AnnotationKind {
  switch (diff) {
    case 'added':
      return 'missing_field';
    case 'removed':
      return 'extra_field';
    case 'typeChanged':
      return 'wrong_type';
    case 'changed':
      return 'hallucinated_value';
    default:
      return 'other';
  }
}

/**
 * The kind most likely meant for a whole call: a rehearsal that did not parse is a format error, an
 * error state that differs is a wrong error state, a single difference suggests its own kind.
 */
export function suggestedCallKind(
  view: Pick<CallView, 'rehearsal' | 'comparison'>,
): AnnotationKind {
  if (view.rehearsal && !view.rehearsal.result.ok) return 'format_error';
  const cmp = view.comparison;
  if (cmp.comparable !== 'none' && !cmp.scores.errorAgreement) return 'wrong_error_state';
  if (cmp.comparable === 'json' && cmp.diff.length === 1) return suggestedKind(cmp.diff[0].kind);
  return 'other';
}
