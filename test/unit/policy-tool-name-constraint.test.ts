import * as assert from 'node:assert/strict';
import { Generation } from '../../src/core/policy/onnx/generation';
import { allowedNameTokens } from '../../src/core/policy/sampling/toolNameConstraint';

// A toy vocabulary: whole words, pieces of names, and the quote that ends a name.
const PIECES = [
  '',
  '<tool_call>',
  '\n{"name": "',
  'find',
  '_user',
  '_id',
  '_by',
  '_email',
  'get',
  '",',
  '"',
  'x',
  '</tool_call>',
];
const NAMES = ['find_user_id_by_email', 'get_user_details'];
const ids = (...pieces: string[]) => pieces.map((p) => PIECES.indexOf(p));

describe('decoding constrained to the offered tool names (issue 26)', () => {
  it("allows only tokens that keep a tool call's name a prefix of an offered name, or close it exactly", () => {
    const at = (text: string) => {
      const allowed = allowedNameTokens(text, NAMES, PIECES);
      return allowed && [...allowed].map((i) => PIECES[i]).sort();
    };
    assert.equal(at('I will look it up.'), undefined, 'outside a tool call');
    assert.deepEqual(at('<tool_call>\n{"name": "'), ['find', 'get'].sort());
    assert.deepEqual(at('<tool_call>\n{"name": "find_user'), ['_id']);
    assert.deepEqual(at('<tool_call>\n{"name": "find_user_id_by_email'), ['"', '",'].sort());
    assert.equal(at('<tool_call>\n{"name": "nothing'), undefined, 'a name no tool starts with');
    assert.equal(
      at('<tool_call>\n{"name": "get", "arguments": {}}\n</tool_call>\n'),
      undefined,
      'after the call ended',
    );
  });

  it('masks the logits a sample draws from: greedy decoding writes an offered name where the model preferred another', () => {
    const decode = (xs: number[]) => xs.map((i) => PIECES[i]).join('');
    const gen = new Generation(
      {
        promptIds: [1],
        n: 1,
        maxTokens: 10,
        sampling: { temperature: 0, topK: 0, topP: 1, seed: 0 },
        decode,
        toolNames: NAMES,
        tokenPieces: () => PIECES,
      },
      1,
      [0],
    );
    // The model's favourite next token is always `x` (it would write `get_x`); then its second.
    const prefer = (...order: string[]) => {
      const logits = new Float32Array(PIECES.length).fill(-5);
      order.forEach((p, k) => (logits[PIECES.indexOf(p)] = 10 - k));
      return logits;
    };
    for (const step of [
      prefer('<tool_call>'),
      prefer('\n{"name": "'),
      prefer('x', 'find'),
      prefer('x', '_user'),
      prefer('x', '_id'),
      prefer('x', '_by'),
      prefer('x', '_email'),
      prefer('x', '",'),
    ])
      gen.pick(0, step, 0, PIECES.length);
    assert.deepEqual(
      gen.samples[0].ids,
      ids('<tool_call>', '\n{"name": "', 'find', '_user', '_id', '_by', '_email', '",'),
    );
    assert.equal(gen.samples[0].text, '<tool_call>\n{"name": "find_user_id_by_email",');
  });
});
