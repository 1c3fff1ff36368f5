import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson } from '../../src/core/base/canonicalJson';
import type { JsonValue } from '../../src/core/base/json';
import { ACT_PARSE_ERROR_CODES, REHEARSAL_PARSE_ERROR_CODES } from '../../src/core/protocol/codes';
import {
  callFragmentMark,
  formatToolCalls,
  parseActOutput,
} from '../../src/core/protocol/actParser';
import { formatRehearsal, parseRehearsalOutput } from '../../src/core/protocol/rehearsalParser';
import { stripAsciiWhitespace } from '../../src/core/protocol/text';

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnitString = fc.string({
  unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});
const TAG_PIECES = [
  '<tool_call>',
  '</tool_call>',
  '\n<tool_call>\n',
  '\n</tool_call>',
  '<execution_result>',
  '</execution_result>',
  '\n<execution_result>\n',
  '\n</execution_result>',
  '<think>',
  '</think>',
  '\n',
  '\r\n',
  '{',
  '}',
  '[',
  ']',
  '"',
  ':',
  ',',
  '{"name": "a", "arguments": {}}',
  '{"a": 1}',
  '"arguments"',
  '"parameters"',
  'null',
  '1e999',
  'NaN',
  '\u00a0',
  '\ud800',
];
/** Random mixes of the protocol's tag strings, JSON fragments and arbitrary text. */
const protocolSoup = fc
  .array(fc.oneof(fc.constantFrom(...TAG_PIECES), codeUnitString), { maxLength: 30 })
  .map((parts) => parts.join(''));
const anyText = fc.oneof(
  codeUnitString,
  fc.string({ unit: 'binary', maxLength: 200 }),
  protocolSoup,
);

const actCodes: readonly string[] = ACT_PARSE_ERROR_CODES;
const rehearsalCodes: readonly string[] = REHEARSAL_PARSE_ERROR_CODES;
const json = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<JsonValue>;
const canonicalEqual = (a: JsonValue, b: JsonValue) =>
  assert.equal(canonicalJson(a), canonicalJson(b));

describe('protocol properties', () => {
  it('parseActOutput never throws and always returns a known shape', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const r = parseActOutput(text);
        assert.equal(r.text, text);
        if (r.kind === 'error') assert.ok(actCodes.includes(r.error.code), r.error.code);
        else if (r.kind === 'calls') {
          for (const c of r.calls) {
            assert.equal(typeof c.name, 'string');
            assert.notEqual(c.name, '');
            assert.notEqual(c.arguments, null);
          }
        } else assert.equal(r.kind, 'final');
        // Without the opening tag a turn is an answer, unless it holds a fragment of a call.
        if (!text.includes('<tool_call>'))
          assert.equal(r.kind, callFragmentMark(text) === undefined ? 'final' : 'error');
        if (!text.includes('<tool_call>'))
          assert.equal(parseActOutput(text, { dialect: 'envace' }).kind, 'final');
      }),
      { numRuns: 2000 },
    );
  });

  it('parseRehearsalOutput never throws; a value is always an array or a non-empty object', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const r = parseRehearsalOutput(text);
        if (!r.ok) {
          assert.ok(rehearsalCodes.includes(r.error.code), r.error.code);
          return;
        }
        assert.ok(
          Array.isArray(r.value) ||
            (typeof r.value === 'object' && r.value !== null && Object.keys(r.value).length > 0),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('parsers treat non-string input as empty text instead of throwing', () => {
    assert.equal(parseActOutput(undefined as unknown as string).kind, 'final');
    const r = parseRehearsalOutput(null as unknown as string);
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.error.code, 'EMPTY_SIMULATOR_OUTPUT');
  });

  it('formatToolCalls -> parseActOutput round-trips names and arguments', () => {
    const name = fc
      .oneof(
        fc.string({ minLength: 1, maxLength: 20 }),
        codeUnitString,
        fc.string({ unit: 'binary', minLength: 1 }),
      )
      .filter((n) => n !== '' && stripAsciiWhitespace(n) === n);
    const args = json.filter((v) => v !== null);
    fc.assert(
      fc.property(
        fc.array(fc.record({ name, arguments: args }), { minLength: 1, maxLength: 4 }),
        (calls) => {
          const text = formatToolCalls(calls);
          const parsed = parseActOutput(text);
          assert.equal(parsed.kind, 'calls', JSON.stringify(parsed));
          if (parsed.kind !== 'calls') return;
          assert.equal(parsed.preamble, '');
          assert.equal(parsed.calls.length, calls.length);
          parsed.calls.forEach((c, i) => {
            assert.equal(c.name, calls[i].name);
            canonicalEqual(c.arguments, calls[i].arguments);
          });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('formatRehearsal -> parseRehearsalOutput round-trips the value and the think text', () => {
    const result = fc.oneof(
      fc.array(json, { maxLength: 5 }),
      fc.dictionary(fc.string(), json, { minKeys: 1, maxKeys: 5 }),
    ) as fc.Arbitrary<JsonValue>;
    const think = fc.option(
      fc.oneof(fc.string(), codeUnitString).filter((t) => !t.includes('</think>')),
      { nil: undefined },
    );
    fc.assert(
      fc.property(result, think, (value, thought) => {
        const parsed = parseRehearsalOutput(formatRehearsal(canonicalJson(value), thought));
        assert.equal(parsed.ok, true, JSON.stringify(parsed));
        if (!parsed.ok) return;
        canonicalEqual(parsed.value, value);
        if (!thought) assert.equal(parsed.think, undefined);
        else assert.equal(parsed.think, stripAsciiWhitespace(thought));
      }),
      { numRuns: 500 },
    );
  });

  it('canonical JSON is a fixed point and parses back to the same value, compact or indented', () => {
    fc.assert(
      fc.property(json, (value) => {
        const text = canonicalJson(value);
        assert.equal(canonicalJson(JSON.parse(text) as JsonValue), text);
        assert.equal(
          canonicalJson(JSON.parse(canonicalJson(value, { indent: 2 })) as JsonValue),
          text,
        );
        assert.ok(!text.includes('\n'), 'compact canonical JSON is one line');
      }),
      { numRuns: 500 },
    );
  });

  it('stripAsciiWhitespace removes exactly the six ASCII whitespace characters at both ends', () => {
    const ascii = fc.constantFrom(' ', '\t', '\n', '\r', '\f', '\v');
    const other = fc.constantFrom(
      '\u00a0',
      '\u3000',
      '\u2028',
      '\u2029',
      '\u0085',
      '\ufeff',
      '\u1680',
      '\u001c',
    );
    fc.assert(
      fc.property(
        fc.array(ascii),
        fc.array(other, { minLength: 1 }),
        fc.array(ascii),
        (pre, core, post) => {
          const inner = core.join('');
          assert.equal(stripAsciiWhitespace(pre.join('') + inner + post.join('')), inner);
        },
      ),
    );
  });
});
