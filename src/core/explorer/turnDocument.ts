import { blockJsonErrorOffset } from '../base/jsonErrorOffset';
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from '../protocol/actParser';
import { findBlocks } from '../protocol/text';
import type { TurnEvent } from '../trace/format/schema';

/** A turn's raw text as a document, and where in it its parse error points. */
export interface TurnDocument {
  text: string;
  /** Offset into `text` of the parse error, when the error says where (a JSON error's position). */
  errorOffset?: number;
  /** The error in one line, for the status bar and the document's first line. */
  error?: string;
}

/**
 * What the policy wrote in a turn, as it wrote it, with the position of its parse error: where the
 * JSON of the first tool-call block's body first goes wrong (its start when the JSON is fine and
 * something else failed); with no block, the first tag or the start.
 */
export function turnDocument(event: TurnEvent): TurnDocument {
  const text = event.text;
  if (event.parse.kind !== 'error') return { text };
  const error = `${event.parse.code}: ${event.parse.message}`;
  const blocks = findBlocks(text, TOOL_CALL_OPEN, TOOL_CALL_CLOSE);
  const block = blocks[0];
  if (!block) return { text, error, errorOffset: Math.max(0, text.indexOf(TOOL_CALL_OPEN)) };
  const offset = blockJsonErrorOffset(block, TOOL_CALL_OPEN.length);
  return { text, error, errorOffset: Math.min(offset, text.length) };
}
