import type { ParseError } from 'jsonc-parser';
import { parse } from 'jsonc-parser';

/**
 * Where strict JSON text first goes wrong, as an offset into it (undefined when it is valid): what
 * a person needs to see of a parse error. JSON.parse's own messages name a position only for some
 * errors, so the place is found by jsonc-parser with comments and trailing commas refused.
 */
export function jsonErrorOffset(text: string): number | undefined {
  const errors: ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false });
  if (errors.length === 0) return undefined;
  return Math.min(...errors.map((e) => e.offset));
}
