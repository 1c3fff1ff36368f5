import { canonicalJson } from '../base/canonicalJson';
import type { CallView } from '../trace/index/callView';

/** One side of a call's diff as a document: its text and whether it is JSON. */
export interface CallSideDocument {
  text: string;
  language: 'json' | 'plaintext';
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
      return {
        text: `Rehearsal parse error ${r.result.code}: ${r.result.message}\n\nRaw rehearsal output:\n${r.text}\n`,
        language: 'plaintext',
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
