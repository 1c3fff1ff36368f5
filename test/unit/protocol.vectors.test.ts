import * as assert from 'node:assert/strict';
import { canonicalJson } from '../../src/core/base/canonicalJson';
import type { JsonValue } from '../../src/core/base/json';
import { ACT_PARSE_ERROR_CODES, REHEARSAL_PARSE_ERROR_CODES } from '../../src/core/protocol/codes';
import { parseActOutput } from '../../src/core/protocol/actParser';
import { parseRehearsalOutput } from '../../src/core/protocol/rehearsalParser';
import type { RehearsePromptInput, RehearsePromptOptions } from '../../src/core/protocol/rehearsePrompt';
import { buildRehearsePrompt } from '../../src/core/protocol/rehearsePrompt';
import type { ChatMessage } from '../../src/core/protocol/types';
import { loadVectors } from './support/vectors';

type ActExpected =
  | { kind: 'final' }
  | { kind: 'calls'; preamble: string; calls: { name: string; arguments: JsonValue }[] }
  | { kind: 'error'; code: string };
type RehearsalExpected = { ok: true; value: JsonValue; think?: string } | { ok: false; code: string };

const act = loadVectors<string, ActExpected>('act');
const rehearsal = loadVectors<string, RehearsalExpected>('rehearsal');
const prompt = loadVectors<{ prompt: RehearsePromptInput; options?: RehearsePromptOptions }, { messages: ChatMessage[] }>('rehearse-prompt');
const canonical = loadVectors<JsonValue, { compact: string; indent2: string }>('canonical-json');

describe('protocol vectors (the contract the Python trainer is checked against)', () => {
  for (const file of [act, rehearsal, prompt, canonical]) {
    it(`every vector file has a description and uniquely named cases (${file.cases.length} cases)`, () => {
      assert.ok(file.description.length > 100);
      const names = file.cases.map((c) => c.name);
      assert.equal(new Set(names).size, names.length, 'duplicate case names');
    });
  }

  describe('act.json: parseActOutput', () => {
    it('covers every act parse error code, the final answer and calls', () => {
      const seen = new Set(act.cases.map((c) => (c.expected.kind === 'error' ? c.expected.code : c.expected.kind)));
      for (const code of [...ACT_PARSE_ERROR_CODES, 'final', 'calls']) assert.ok(seen.has(code), `no vector for ${code}`);
    });
    for (const c of act.cases) {
      it(c.name, () => {
        const got = parseActOutput(c.input);
        assert.equal(got.text, c.input, 'the raw text is kept');
        const e = c.expected;
        if (e.kind === 'final') assert.equal(got.kind, 'final');
        else if (e.kind === 'error') {
          assert.equal(got.kind, 'error', `expected ${e.code}, got ${JSON.stringify(got)}`);
          if (got.kind === 'error') {
            assert.equal(got.error.code, e.code);
            assert.ok(got.error.message.length > 0);
          }
        } else {
          assert.equal(got.kind, 'calls', `expected calls, got ${JSON.stringify(got)}`);
          if (got.kind === 'calls') {
            assert.equal(got.preamble, e.preamble);
            assert.deepEqual(got.calls, e.calls);
          }
        }
      });
    }
  });

  describe('rehearsal.json: parseRehearsalOutput', () => {
    it('covers every rehearsal parse error code and results with and without think', () => {
      const seen = new Set(rehearsal.cases.map((c) => (c.expected.ok ? (c.expected.think === undefined ? 'ok' : 'ok+think') : c.expected.code)));
      for (const code of [...REHEARSAL_PARSE_ERROR_CODES, 'ok', 'ok+think']) assert.ok(seen.has(code), `no vector for ${code}`);
    });
    for (const c of rehearsal.cases) {
      it(c.name, () => {
        const got = parseRehearsalOutput(c.input);
        const e = c.expected;
        if (!e.ok) {
          assert.equal(got.ok, false, `expected ${e.code}, got ${JSON.stringify(got)}`);
          if (!got.ok) {
            assert.equal(got.error.code, e.code);
            assert.ok(got.error.message.length > 0);
          }
          return;
        }
        assert.equal(got.ok, true, `expected a value, got ${JSON.stringify(got)}`);
        if (!got.ok) return;
        assert.deepEqual(got.value, e.value);
        if (e.think === undefined) assert.ok(!('think' in got), `unexpected think ${JSON.stringify(got)}`);
        else assert.equal(got.think, e.think);
      });
    }
  });

  describe('rehearse-prompt.json: buildRehearsePrompt', () => {
    for (const c of prompt.cases) {
      it(c.name, () => {
        assert.deepEqual(buildRehearsePrompt(c.input.prompt, c.input.options), c.expected.messages);
      });
    }
  });

  describe('canonical-json.json: canonicalJson', () => {
    for (const c of canonical.cases) {
      it(c.name, () => {
        assert.equal(canonicalJson(c.input), c.expected.compact);
        assert.equal(canonicalJson(c.input, { indent: 2 }), c.expected.indent2);
        // The canonical text is itself JSON for the same value.
        assert.equal(canonicalJson(JSON.parse(c.expected.compact) as JsonValue), c.expected.compact);
      });
    }
  });
});
