import * as assert from 'node:assert/strict';
import type { TurnEvent } from '../../src/core/trace/format/schema';
import { turnDocument } from '../../src/core/explorer/turnDocument';
import { sampleShadowRun } from '../builders/samples';

describe("turnDocument (a turn's raw text with its parse error)", () => {
  const turns = sampleShadowRun()
    .text()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TurnEvent)
    .filter((e) => e.type === 'turn');

  it("points a JSON error at its position inside the tool call's body", () => {
    const failed = turns.find((t) => t.parse.kind === 'error')!;
    const doc = turnDocument(failed);
    assert.equal(doc.text, failed.text);
    assert.match(
      doc.error!,
      /^JSON_DECODE_ERROR: A tool call is not valid JSON \(.* at position 67\)/,
    );
    // Position 67 of the body `{"name": ..., "arguments": {"order_id": "#W2611340"` is just past its end: the missing `}`.
    assert.equal(doc.text.slice(doc.errorOffset! - 11, doc.errorOffset), '"#W2611340"');
  });

  it('has no error for a turn that parsed, and points other errors at the tool call', () => {
    const ok = turns.find((t) => t.parse.kind === 'calls')!;
    assert.deepEqual(turnDocument(ok), { text: ok.text });
    const text = 'I will look.\n<tool_call>\n{"name": "x"}\n</tool_call>';
    const doc = turnDocument({
      ...ok,
      text,
      parse: { kind: 'error', code: 'NO_ARGUMENTS', message: 'A tool call has no "arguments".' },
    } as TurnEvent);
    assert.equal(doc.errorOffset, text.indexOf('{'));
  });
});
