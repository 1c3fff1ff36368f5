// Every StudioError code is listed once, in src/core/base/errorCodes.ts, and documented in
// docs/error-codes.md: the page and the list must hold the same codes with the same text.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isStudioErrorCode, STUDIO_ERROR_CODES } from '../../src/core/base/errorCodes';
import { studioRoot } from '../../src/core/base/studioRoot';

/** The `| \`CODE\` | doc |` rows of docs/error-codes.md, in order. */
function documentedCodes(): { code: string; doc: string }[] {
  const text = readFileSync(path.join(studioRoot(), 'docs', 'error-codes.md'), 'utf8');
  return [...text.matchAll(/^\| `([A-Z0-9_]+)` \| (.*) \|$/gm)].map((m) => ({
    code: m[1],
    doc: m[2],
  }));
}

describe('StudioError codes', () => {
  it('docs/error-codes.md documents every code, with its text from errorCodes.ts, and no other', () => {
    const rows = documentedCodes();
    const listed = Object.keys(STUDIO_ERROR_CODES);
    assert.deepEqual(
      rows.map((r) => r.code).filter((c) => !isStudioErrorCode(c)),
      [],
      'documented codes the union lacks',
    );
    assert.deepEqual(
      listed.filter((c) => !rows.some((r) => r.code === c)),
      [],
      'codes docs/error-codes.md lacks',
    );
    assert.equal(new Set(rows.map((r) => r.code)).size, rows.length, 'a code documented twice');
    for (const { code, doc } of rows)
      assert.equal(
        doc,
        STUDIO_ERROR_CODES[code as keyof typeof STUDIO_ERROR_CODES],
        `the text of ${code}`,
      );
  });

  it('every code is an upper-case name with a one-line doc', () => {
    for (const [code, doc] of Object.entries(STUDIO_ERROR_CODES)) {
      assert.match(code, /^[A-Z][A-Z0-9_]*$/);
      assert.ok(doc.length > 0 && !doc.includes('\n') && !doc.includes('|'), code);
    }
  });

  it('isStudioErrorCode accepts listed codes only', () => {
    assert.equal(isStudioErrorCode('USAGE'), true);
    assert.equal(isStudioErrorCode('TOOL_TIMEOUT'), false);
    assert.equal(isStudioErrorCode('toString'), false);
    assert.equal(isStudioErrorCode(undefined), false);
  });
});
