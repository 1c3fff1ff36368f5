import Ajv from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import traceSchema from '../../../../schemas/trace.schema.json';
import type { TraceEvent } from './schema';

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  // Compiled on first use: most processes that import the trace module never validate.
  compiled ??= new Ajv({ discriminator: true, strict: false, allErrors: false }).compile(
    traceSchema,
  );
  return compiled;
}

/** Why a value is not a valid trace event, as one line: `/runId must match pattern ...`. */
export function describeValidationError(errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return 'invalid event';
  return `${e.instancePath || '(event)'} ${e.message ?? 'is invalid'}`;
}

/** Checks a value against schemas/trace.schema.json. */
export function validateTraceEvent(
  value: unknown,
): { ok: true; event: TraceEvent } | { ok: false; reason: string } {
  const validate = validator();
  if (validate(value)) return { ok: true, event: value as TraceEvent };
  return { ok: false, reason: describeValidationError(validate.errors) };
}
