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

const LEADING_ASCII_WS = /^[ \t\n\r]*/;

/**
 * Where the JSON body of a tagged block (`<tool_call>`, `<execution_result>`) first goes wrong, as
 * an offset into the text the block was found in: the body starts after the opening tag and its
 * leading whitespace, as the parsers read it; the body's start when its JSON is fine (something
 * else failed).
 */
export function blockJsonErrorOffset(
  block: { start: number; inner: string },
  openLength: number,
): number {
  const lead = LEADING_ASCII_WS.exec(block.inner)?.[0].length ?? 0;
  const body = block.inner.slice(lead).trimEnd();
  return block.start + openLength + lead + (jsonErrorOffset(body) ?? 0);
}
