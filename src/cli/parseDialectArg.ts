import { StudioError } from '../core/base/errors';
import type { ParseDialect } from '../core/protocol/dialect';
import { isParseDialect, PARSE_DIALECTS } from '../core/protocol/dialect';

/** `--parse`: the parse dialect a command names, validated; undefined when it names none. */
export function parseDialectArg(value: string | undefined): ParseDialect | undefined {
  if (value === undefined) return undefined;
  if (!isParseDialect(value))
    throw new StudioError(
      'USAGE',
      `--parse must be ${PARSE_DIALECTS.join(' or ')}, not "${value}".`,
    );
  return value;
}
