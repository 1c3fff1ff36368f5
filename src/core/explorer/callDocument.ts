import { canonicalJson } from '../base/canonicalJson';
import { blockJsonErrorOffset } from '../base/jsonErrorOffset';
import {
  EXECUTION_RESULT_CLOSE,
  EXECUTION_RESULT_OPEN,
  EXECUTION_RESULT_START,
} from '../protocol/rehearsalParser';
import { findBlocks } from '../protocol/text';
import type { CallView } from '../trace/index/callView';

/** One side of a call's diff as a document: its text and whether it is JSON. */
export interface CallSideDocument {
  text: string;
  language: 'json' | 'plaintext';
  /** Where a rehearsal that did not parse failed: an offset into `text`, and the error in one line. */
  parseError?: { offset: number; message: string };
}

const RAW_HEADING = '\n\nRaw rehearsal output:\n';

/**
 * Where in a rehearsal's raw output its parse error is: in the first `<execution_result>` block's
 * body, where its JSON first goes wrong; a malformed block points at its tag; an output with no tag
 * at its start.
 */
function rehearsalErrorOffset(raw: string): number {
  const block = findBlocks(raw, EXECUTION_RESULT_OPEN, EXECUTION_RESULT_CLOSE)[0];
  const tag = raw.indexOf(EXECUTION_RESULT_START);
  if (!block) return Math.max(0, tag);
  return Math.min(blockJsonErrorOffset(block, EXECUTION_RESULT_OPEN.length), raw.length);
}

/** 1-based line and column of an offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  return { line: before.split('\n').length, column: offset - before.lastIndexOf('\n') };
}

/**
 * The text of one side of a call's diff: canonical pretty JSON when the side is JSON (so that the
 * diff shows only real differences), the raw text otherwise, and a clear note when there is nothing
 * to show (a parse error, a tool that never answered).
 */
export function callSideDocument(view: CallView, side: 'rehearsal' | 'actual'): CallSideDocument {
  if (side === 'rehearsal') {
    const r = view.rehearsal;
    if (!r) return { text: 'This call was not rehearsed.\n', language: 'plaintext' };
    if (!r.result.ok) {
      const inRaw = rehearsalErrorOffset(r.text);
      const { line, column } = lineColumn(r.text, inRaw);
      // One line, whatever the parser's message quotes of the output.
      const message = r.result.message.replace(/\s*\n\s*/g, ' ');
      const heading = `Rehearsal parse error ${r.result.code}: ${message} (raw output line ${line}, column ${column})`;
      return {
        text: `${heading}${RAW_HEADING}${r.text}\n`,
        language: 'plaintext',
        parseError: {
          offset: heading.length + RAW_HEADING.length + inRaw,
          message: `${r.result.code}: ${message}`,
        },
      };
    }
    return { text: canonicalJson(r.result.value, { indent: 2 }) + '\n', language: 'json' };
  }
  const a = view.actual;
  if (!a) return { text: 'The tool has not answered this call (yet).\n', language: 'plaintext' };
  if (a.error && !a.response)
    return {
      text: `The tool gave no response: ${a.error.code}: ${a.error.message}\n`,
      language: 'plaintext',
    };
  const v = view.actualValue;
  if (!v) return { text: '(empty response)\n', language: 'plaintext' };
  if (v.kind === 'json')
    return { text: canonicalJson(v.value, { indent: 2 }) + '\n', language: 'json' };
  return { text: v.text.endsWith('\n') ? v.text : v.text + '\n', language: 'plaintext' };
}
