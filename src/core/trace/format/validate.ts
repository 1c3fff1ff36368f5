import type { ErrorObject } from '../../base/jsonSchema';
import { schemaCheck } from '../../base/jsonSchema';
import traceSchema from '../../../../schemas/trace.schema.json';
import type { TraceEvent } from './schema';

const checkEvent = schemaCheck(traceSchema, { discriminator: true });

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
  const checked = checkEvent(value);
  if (checked.ok) return { ok: true, event: value as TraceEvent };
  return { ok: false, reason: describeValidationError(checked.errors) };
}
