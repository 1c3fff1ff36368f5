import Ajv from 'ajv';
import type { ErrorObject } from 'ajv';

export type { ErrorObject } from 'ajv';

/** How a schema is checked: every fault (run files, for people to fix at once) or the first (hot paths). */
export interface SchemaOptions {
  allErrors?: boolean;
  /** The schema's `discriminator` keywords pick the branch of a `oneOf` by a property (`type`, `kind`). */
  discriminator?: boolean;
}

/** A compiled schema check: true, or the faults Ajv found. */
export type SchemaCheck = (value: unknown) => { ok: true } | { ok: false; errors: ErrorObject[] };

/**
 * The one place the studio checks a value against one of its JSON schemas (`schemas/*.json`):
 * compiled on first use (most processes that import a format never validate), with the same Ajv
 * settings everywhere (`strict: false`, as the schemas carry editor-only keywords).
 */
export function schemaCheck(schema: object, options: SchemaOptions = {}): SchemaCheck {
  let validate: ReturnType<Ajv['compile']> | undefined;
  return (value) => {
    validate ??= new Ajv({
      strict: false,
      allErrors: options.allErrors ?? false,
      discriminator: options.discriminator ?? false,
    }).compile(schema);
    return validate(value) ? { ok: true } : { ok: false, errors: validate.errors ?? [] };
  };
}
