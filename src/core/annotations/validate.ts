import { schemaCheck } from '../base/jsonSchema';
import annotationSchema from '../../../schemas/annotation.schema.json';
import { describeValidationError } from '../trace/format/validate';
import type { AnnotationEvent } from './schema';

const checkAnnotation = schemaCheck(annotationSchema, { discriminator: true });

/** Checks a value against schemas/annotation.schema.json. */
export function validateAnnotationEvent(
  value: unknown,
): { ok: true; event: AnnotationEvent } | { ok: false; reason: string } {
  const checked = checkAnnotation(value);
  if (checked.ok) return { ok: true, event: value as AnnotationEvent };
  return { ok: false, reason: describeValidationError(checked.errors) };
}
