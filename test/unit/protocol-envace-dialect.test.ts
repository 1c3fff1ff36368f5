// The envace parse dialect without Python: errors reported where the policy wrote them, the dialect
// chosen per call, and a long text of literals. Against CPython itself:
// test/e2e/protocol-envace-cpython.test.ts.
import * as assert from 'node:assert/strict';
import { parseActOutput } from '../../src/core/protocol/actParser';
import { parsePythonJson } from '../../src/core/protocol/pythonJsonLoads';
import { parseRehearsalOutput } from '../../src/core/protocol/rehearsalParser';

describe('protocol: the envace dialect', () => {
  it('an error in a text with literals is reported at its place in the text the policy wrote', () => {
    const got = parsePythonJson('[NaN, Infinity, }');
    assert.equal(got.ok, false);
    if (!got.ok) assert.match(got.error, /Unexpected token '}'/);
    if (!got.ok) assert.doesNotMatch(got.error, /numberDouble/);
  });

  it('the envace dialect is chosen per call; the studio dialect stays the default', () => {
    const text = '\n<tool_call>\n{"name": "a", "arguments": {"x": NaN}}\n</tool_call>';
    assert.equal(parseActOutput(text).kind, 'error');
    assert.deepEqual(parseActOutput(text, { dialect: 'envace' }), {
      kind: 'calls',
      text,
      preamble: '',
      calls: [{ name: 'a', arguments: { x: { $numberDouble: 'NaN' } } }],
    });
    const rehearsal = '\n<execution_result>\n{"x": -Infinity}\n</execution_result>';
    const studio = parseRehearsalOutput(rehearsal);
    assert.equal(!studio.ok && studio.error.code, 'SIMULATOR_JSON_DECODE_ERROR');
    assert.deepEqual(parseRehearsalOutput(rehearsal, { dialect: 'envace' }), {
      ok: true,
      value: { x: { $numberDouble: '-Infinity' } },
    });
  });

  it('a text of 200,000 literals parses, each encoded', () => {
    const text = `[${Array.from({ length: 200_000 }, (_, i) => (i % 2 ? 'NaN' : '-Infinity')).join(',')}]`;
    const got = parsePythonJson(text);
    assert.ok(got.ok && Array.isArray(got.value) && got.value.length === 200_000);
    if (got.ok && Array.isArray(got.value))
      assert.deepEqual(got.value.slice(0, 2), [
        { $numberDouble: '-Infinity' },
        { $numberDouble: 'NaN' },
      ]);
  });
});
