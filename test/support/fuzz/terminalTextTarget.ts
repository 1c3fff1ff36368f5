import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { terminalText } from '../../../src/core/base/terminalText';
import type { Palette } from '../../../src/core/report/textFormat';
import { palette } from '../../../src/core/report/textFormat';
import { codeUnits, insertion } from './mutate';
import type { FuzzTarget } from './targets';

/** What no text shown to a terminal may hold raw: C0 but newline and tab, DEL, C1, bidi controls. */
export const TERMINAL_CONTROL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** The escapes terminalText writes, read back: the inverse for text without a backslash of its own. */
function unescaped(shown: string): string {
  return shown.replace(/\\x([0-9a-f]{2})|\\u([0-9a-f]{4})/g, (_, x?: string, u?: string) =>
    String.fromCharCode(parseInt(x ?? u ?? '', 16)),
  );
}

/** Text a task, a tool or a policy could send: control-heavy pieces, any code units, binary. */
const outsideText = fc
  .array(
    fc.oneof(
      insertion,
      codeUnits,
      fc.constantFrom('\u001b]0;title\u0007', '\u001b[2J', '\u009b31m', '\u202e', '\u2066'),
    ),
    { maxLength: 12 },
  )
  .map((pieces) => pieces.join(''))
  // A segment is styled whole: one never ends inside a surrogate pair (a style between the halves
  // would make them two lone surrogates, rightly shown escaped, where the plain text has one pair).
  .map((text) => (/[\ud800-\udbff]$/.test(text) ? `${text}.` : text));

const STYLES: (keyof Palette)[] = ['added', 'removed', 'changed', 'dim', 'bold', 'error'];

/** The studio's own colour codes: bold, dim and their end, red, green, yellow and their end. */
const OWN_SGR = /\u001b\[(?:1|2|22|31|32|33|39)m/g;

/**
 * The terminal text function as a fuzz target: outside text, alone and inside the palette's styles
 * (nested too). The promise: with colour off or on, nothing a terminal acts on comes out raw but
 * the studio's own SGR codes; newlines and tabs stay; colour adds only those codes; and the output
 * reads back as the input (different inputs stay distinguishable), unless the input itself spells
 * an escape (`\x1b` typed as text reads as an escaped ESC: both are harmless, and the escapes stay
 * valid JSON, so `--json` output keeps its values).
 */
export const terminalTextTarget: FuzzTarget = {
  name: 'terminal text (outside text, plain and styled)',
  property: () =>
    fc.property(
      fc.array(fc.tuple(outsideText, fc.subarray(STYLES, { maxLength: 2 })), {
        minLength: 1,
        maxLength: 6,
      }),
      (segments) => {
        const plain = segments.map(([text]) => text).join('');
        const shown = terminalText(plain, { color: false });
        assert.doesNotMatch(shown, TERMINAL_CONTROL, JSON.stringify(shown));
        assert.equal(shown.split('\n').length, plain.split('\n').length, 'newlines stay');
        assert.equal(shown.split('\t').length, plain.split('\t').length, 'tabs stay');
        if (!plain.includes('\\')) assert.equal(unescaped(shown), plain, 'it reads back');
        const c = palette(true);
        const styled = segments
          .map(([text, styles]) => styles.reduce((s, style) => c[style](s), text))
          .join('');
        const coloured = terminalText(styled, { color: true });
        const withoutOwn = coloured.replace(OWN_SGR, '');
        assert.doesNotMatch(withoutOwn, TERMINAL_CONTROL, JSON.stringify(coloured));
        assert.equal(withoutOwn, shown, 'colour adds only its own codes');
        assert.equal(terminalText(styled, { color: false }), shown, 'no colour, no codes');
      },
    ),
};
