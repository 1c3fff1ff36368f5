import type { DiffKind } from '../fidelity/structuralDiff';
import type { AnnotationKind } from './schema';

/**
 * The kind of error a difference of a structural diff most likely is, to preselect in pickers:
 * a path only in the actual response was missed, one only in the rehearsal was invented, another
 * JSON type is a type error, another value is a hallucinated value.
 */
export function suggestedKind(diff: DiffKind | undefined): AnnotationKind {
  switch (diff) {
    case 'added': return 'missing_field';
    case 'removed': return 'extra_field';
    case 'typeChanged': return 'wrong_type';
    case 'changed': return 'hallucinated_value';
    default: return 'other';
  }
}
