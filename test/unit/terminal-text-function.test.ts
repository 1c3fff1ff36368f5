// terminalText itself: what it escapes, and when style marks become colour. What the CLI prints
// through it, run for real: test/e2e/terminal-text.test.ts.
import * as assert from 'node:assert/strict';
import { styleMark, terminalText } from '../../src/core/base/terminalText';

describe('terminal text: the function', () => {
  it('shows C0 (but newline and tab), DEL, C1, bidi controls and lone surrogates escaped', () => {
    assert.equal(
      terminalText(`a\u0000\u0007\b\r\u001b[2J\tb\nc\u007f\u0085\u009b\u061c\u200e\u200f`, {
        color: false,
      }),
      'a\\x00\\x07\\x08\\x0d\\x1b[2J\tb\nc\\u007f\\u0085\\u009b\\u061c\\u200e\\u200f',
    );
    assert.equal(
      terminalText('\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069', { color: true }),
      '\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069',
    );
    assert.equal(
      terminalText('\ud800x\udc00 \ud83d\ude00', { color: false }),
      '\\ud800x\\udc00 😀',
    );
    assert.equal(terminalText('plain · text → ünïcode', { color: true }), 'plain · text → ünïcode');
  });

  it("the studio's style marks become colour only with colour on; a forged mark is shown escaped", () => {
    const styled = `${styleMark('1')}bold${styleMark('22')}`;
    assert.equal(terminalText(styled, { color: true }), '\u001b[1mbold\u001b[22m');
    assert.equal(terminalText(styled, { color: false }), 'bold');
    const forged = '\u0000' + '0'.repeat(24) + '[1mbold';
    assert.equal(terminalText(forged, { color: true }), `\\x00${'0'.repeat(24)}[1mbold`);
  });
});
