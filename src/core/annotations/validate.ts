import Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';
import annotationSchema from '../../../schemas/annotation.schema.json';
import { describeValidationError } from '../trace/format/validate';
import type { AnnotationEvent } from './schema';

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  compiled ??= new Ajv({ discriminator: true, strict: false, allErrors: false }).compile(
    annotationSchema,
  );
  return compiled;
}

/** Checks a value against schemas/annotation.schema.json. */
export function validateAnnotationEvent(
  value: unknown,
): { ok: true; event: AnnotationEvent } | { ok: false; reason: string } {
  const validate = validator();
  if (validate(value)) return { ok: true, event: value as AnnotationEvent };
  return { ok: false, reason: describeValidationError(validate.errors) };
}
