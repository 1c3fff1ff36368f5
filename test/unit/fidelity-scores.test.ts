import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import type { JsonValue } from '../../src/core/base/json';
import { canonicalJson } from '../../src/core/base/canonicalJson';
import { compareResponses } from '../../src/core/fidelity/compare';
import { indexPaths } from '../../src/core/fidelity/leaves';
import { MAX_PATH_DEPTH } from '../../src/core/fidelity/jsonPath';
import { actualValue, looksLikeError, rehearsalValue } from '../../src/core/fidelity/responseValue';
import type { FidelityScores } from '../../src/core/fidelity/scores';
import { jaccard, jsonScores, setF1, textScores } from '../../src/core/fidelity/scores';
import { structuralDiff } from '../../src/core/fidelity/structuralDiff';

function close(actual: number | null, expected: number, what: string): void {
  assert.ok(
    actual !== null && Math.abs(actual - expected) < 1e-12,
    `${what}: ${actual} != ${expected}`,
  );
}

function assertScores(
  s: FidelityScores,
  e: { exact: boolean; f1: number; keys: number | null; types: number | null; errors: boolean },
): void {
  assert.equal(s.exactMatch, e.exact, 'exactMatch');
  close(s.fieldF1, e.f1, 'fieldF1');
  if (e.keys === null) assert.equal(s.keyJaccard, null);
  else close(s.keyJaccard, e.keys, 'keyJaccard');
  if (e.types === null) assert.equal(s.typeAgreement, null);
  else close(s.typeAgreement, e.types, 'typeAgreement');
  assert.equal(s.errorAgreement, e.errors, 'errorAgreement');
}

describe('fidelity scores (hand-computed)', () => {
  it('set F1 and Jaccard, with two empty sets agreeing', () => {
    close(setF1(new Set(['a', 'b']), new Set(['a', 'b', 'c'])), 0.8, 'F1');
    close(jaccard(new Set(['a', 'b']), new Set(['a', 'b', 'c'])), 2 / 3, 'J');
    assert.equal(setF1(new Set(), new Set()), 1);
    assert.equal(jaccard(new Set(), new Set()), 1);
    assert.equal(setF1(new Set(['a']), new Set()), 0);
    assert.equal(jaccard(new Set(['a']), new Set(['b'])), 0);
  });

  it('a missed field: F1 over (path, value) leaves, Jaccard over keys', () => {
    // leaves 2 vs 3, 1 shared: P 1/2, R 1/3, F1 2/5. keys 2 vs 3, 2 shared: 2/3. types: $, user_id, name all agree.
    const s = jsonScores(
      { user_id: 'u1', name: 'Mia' },
      { user_id: 'u1', name: 'Mia G', email: 'm@example.com' },
      false,
      false,
    );
    assertScores(s, { exact: false, f1: 2 / 5, keys: 2 / 3, types: 1, errors: true });
  });

  it('key Jaccard generalises array indices: a second item only adds its new keys', () => {
    // keys: items, items[*], items[*].sku, items[*].qty (4) vs + items[*].gift (5): 4/5.
    // leaves: 2 vs 5, 2 shared: P 1, R 2/5, F1 4/7. types of the rehearsal's 5 paths all agree.
    const s = jsonScores(
      { items: [{ sku: 'A', qty: 1 }] },
      {
        items: [
          { sku: 'A', qty: 1 },
          { sku: 'B', qty: 2, gift: true },
        ],
      },
      false,
      false,
    );
    assertScores(s, { exact: false, f1: 4 / 7, keys: 4 / 5, types: 1, errors: true });
  });

  it('type agreement counts the paths present in both', () => {
    // shared paths: $, id, tags, price (4); agree: $ and price (2). leaves 3 vs 4, 1 shared: F1 2/7. keys 3 vs 4: 3/4.
    const s = jsonScores(
      { id: '7', tags: 'a,b', price: 10 },
      { id: 7, tags: ['a', 'b'], price: 10 },
      false,
      false,
    );
    assertScores(s, { exact: false, f1: 2 / 7, keys: 3 / 4, types: 1 / 2, errors: true });
  });

  it('error agreement compares the error states only', () => {
    assert.equal(jsonScores({ a: 1 }, { a: 1 }, false, true).errorAgreement, false);
    assert.equal(jsonScores({ error: 'x' }, { error: 'y' }, true, true).errorAgreement, true);
  });

  it('identical documents score 1 everywhere', () => {
    const doc = {
      order_id: '#W1',
      items: [
        { sku: 'A', price: 47.1 },
        { sku: 'B', price: 23.25 },
      ],
      note: null,
    };
    assertScores(jsonScores(doc, JSON.parse(JSON.stringify(doc)) as JsonValue, false, false), {
      exact: true,
      f1: 1,
      keys: 1,
      types: 1,
      errors: true,
    });
  });

  it('empty documents', () => {
    assertScores(jsonScores({}, {}, false, false), {
      exact: true,
      f1: 1,
      keys: 1,
      types: 1,
      errors: true,
    });
    assertScores(jsonScores([], [], false, false), {
      exact: true,
      f1: 1,
      keys: 1,
      types: 1,
      errors: true,
    });
    // {} and [] have no keys alike, but differ as leaves and as root types.
    assertScores(jsonScores({}, [], false, false), {
      exact: false,
      f1: 0,
      keys: 1,
      types: 0,
      errors: true,
    });
    // An empty rehearsal against a full response: its only leaf is the root.
    assertScores(jsonScores([], [1, 2], false, false), {
      exact: false,
      f1: 0,
      keys: 0,
      types: 1,
      errors: true,
    });
  });

  it('indexes leaves, schema keys and types of a value', () => {
    const index = indexPaths({ a: [{ b: 1 }, {}], c: 'x' });
    assert.deepEqual([...index.leaves].sort(), ['$.a[0].b=1', '$.a[1]={}', '$.c="x"']);
    assert.deepEqual([...index.keys].sort(), ['$.a', '$.a[*]', '$.a[*].b', '$.c']);
    assert.deepEqual(Object.fromEntries(index.types), {
      $: 'object',
      '$.a': 'array',
      '$.a[0]': 'object',
      '$.a[0].b': 'number',
      '$.a[1]': 'object',
      '$.c': 'string',
    });
  });
});

describe('fidelity scores match their definition on path sets (property)', () => {
  /** The scores computed the slow, obvious way from indexPaths. */
  function byDefinition(
    r: JsonValue,
    a: JsonValue,
  ): { exact: boolean; f1: number; keys: number; types: number } {
    const ri = indexPaths(r);
    const ai = indexPaths(a);
    let shared = 0;
    let agree = 0;
    for (const [path, type] of ri.types) {
      const other = ai.types.get(path);
      if (other === undefined) continue;
      shared++;
      if (other === type) agree++;
    }
    return {
      exact: canonicalJson(r) === canonicalJson(a),
      f1: setF1(ri.leaves, ai.leaves),
      keys: jaccard(ri.keys, ai.keys),
      types: shared ? agree / shared : 0,
    };
  }

  // Pairs that share most of their structure, as a rehearsal and its actual response do.
  const leaf = fc.oneof(
    fc.constantFrom(null, true, false, 0, -0, 1, 'a', '', [], {}),
    fc.integer(),
    fc.string({ maxLength: 3 }),
  );
  const key = fc.constantFrom('a', 'b', 'c', 'a b', '0', '', '__proto__', '[*]');
  const { value } = fc.letrec<{ value: JsonValue }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      leaf,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(key, tie('value'), { maxKeys: 4 }),
    ),
  }));
  const mutate = (v: JsonValue, choice: number): JsonValue => {
    if (Array.isArray(v))
      return choice % 3 === 0
        ? v.slice(1)
        : v.map((x, i) => (i === choice % v.length ? mutate(x, choice >> 2) : x));
    if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      if (keys.length === 0 || choice % 5 === 0) return { ...v, c: 1 };
      const k = keys[choice % keys.length];
      return { ...v, [k]: mutate(v[k], choice >> 2) };
    }
    return choice % 2 ? String(v) : [v];
  };
  const pair = fc.oneof(
    fc.tuple(value, value),
    fc.tuple(value, fc.nat()).map(([v, c]) => [v, mutate(v, c)] as [JsonValue, JsonValue]),
    value.map((v) => [v, JSON.parse(JSON.stringify(v)) as JsonValue] as [JsonValue, JsonValue]),
  );

  it('exact match, field F1, key Jaccard and type agreement equal the set definitions', () => {
    fc.assert(
      fc.property(pair, ([r, a]) => {
        const s = jsonScores(r, a, false, false);
        const d = byDefinition(r, a);
        assert.equal(s.exactMatch, d.exact, 'exactMatch');
        close(s.fieldF1, d.f1, 'fieldF1');
        close(s.keyJaccard, d.keys, 'keyJaccard');
        close(s.typeAgreement, d.types, 'typeAgreement');
      }),
      { numRuns: 3000 },
    );
  });

  it('agrees with the definition past the depth bound', () => {
    const nest = (depth: number, leafValue: JsonValue): JsonValue => {
      let v = leafValue;
      for (let i = 0; i < depth; i++) v = i % 3 ? { a: v } : [v];
      return v;
    };
    for (const [r, a] of [
      [nest(MAX_PATH_DEPTH + 5, 1), nest(MAX_PATH_DEPTH + 5, 2)],
      [nest(MAX_PATH_DEPTH + 5, 1), nest(MAX_PATH_DEPTH + 5, 1)],
      [nest(MAX_PATH_DEPTH, []), nest(MAX_PATH_DEPTH, {})],
    ]) {
      const s = jsonScores(r, a, false, false);
      const d = byDefinition(r, a);
      assert.equal(s.exactMatch, d.exact);
      close(s.fieldF1, d.f1, 'fieldF1');
      close(s.keyJaccard, d.keys, 'keyJaccard');
      close(s.typeAgreement, d.types, 'typeAgreement');
    }
  });
});

describe('text fallback', () => {
  it('scores word tokens as a multiset', () => {
    // 4 tokens vs 5, all 4 shared: P 1, R 4/5, F1 8/9.
    assertScores(
      textScores('the order was delivered', 'the order was delivered today', false, false),
      { exact: false, f1: 8 / 9, keys: null, types: null, errors: true },
    );
    // {a, a, b} vs {a, b, b}: 2 shared of 3 each.
    close(textScores('a a b', 'a b b', false, false).fieldF1, 2 / 3, 'multiset F1');
    assertScores(textScores('same  text', 'same  text', true, true), {
      exact: true,
      f1: 1,
      keys: null,
      types: null,
      errors: true,
    });
    assertScores(textScores('', '', false, false), {
      exact: true,
      f1: 1,
      keys: null,
      types: null,
      errors: true,
    });
  });

  it('compares JSON with text as text, the JSON side pretty-printed', () => {
    const cmp = compareResponses(
      rehearsalValue({ user_id: 'noah_kim_1180' }),
      actualValue({ text: ['Error: user not found'], isError: true }),
    );
    assert.equal(cmp.comparable, 'text');
    if (cmp.comparable !== 'text') return;
    assert.equal(cmp.scores.errorAgreement, false);
    assert.equal(cmp.scores.fieldF1, 0);
    // The word diff rebuilds both sides: kept + removed is the rehearsal, kept + added the actual text.
    assert.equal(
      cmp.textDiff
        .filter((c) => !c.added)
        .map((c) => c.value)
        .join(''),
      '{\n  "user_id": "noah_kim_1180"\n}',
    );
    assert.equal(
      cmp.textDiff
        .filter((c) => !c.removed)
        .map((c) => c.value)
        .join(''),
      'Error: user not found',
    );
  });

  it('compares two JSON values structurally', () => {
    const cmp = compareResponses(
      rehearsalValue({ status: 'pending' }),
      actualValue({ text: ['{"status": "delivered"}'] }),
    );
    assert.equal(cmp.comparable, 'json');
    if (cmp.comparable !== 'json') return;
    assert.deepEqual(cmp.counts, { added: 0, removed: 0, changed: 1, typeChanged: 0 });
    assert.equal(cmp.diff[0].path, '$.status');
  });
});

describe('actualValue: what an MCP result is compared as', () => {
  it('prefers structured content to the text items', () => {
    assert.deepEqual(actualValue({ text: ['{"a": 1}'], structured: { b: 2 } }), {
      kind: 'json',
      value: { b: 2 },
      isError: false,
    });
  });

  it('falls back to the text when structured content is null', () => {
    assert.deepEqual(actualValue({ text: ['{"a": 1}'], structured: null }), {
      kind: 'json',
      value: { a: 1 },
      isError: false,
    });
  });

  it('reads the text items as JSON when they parse (joined by newlines)', () => {
    assert.deepEqual(actualValue({ text: ['[1,', '2]'] }), {
      kind: 'json',
      value: [1, 2],
      isError: false,
    });
    assert.deepEqual(actualValue({ text: ['"done"'] }), {
      kind: 'json',
      value: 'done',
      isError: false,
    });
  });

  it('keeps plain text as text, with the error flag', () => {
    assert.deepEqual(actualValue({ text: ['Error: user not found'], isError: true }), {
      kind: 'text',
      text: 'Error: user not found',
      isError: true,
    });
    assert.deepEqual(actualValue({ text: ['two', 'items'] }), {
      kind: 'text',
      text: 'two\nitems',
      isError: false,
    });
    assert.deepEqual(actualValue({}), { kind: 'text', text: '', isError: false });
    assert.deepEqual(actualValue({ text: ['  '] }), { kind: 'text', text: '  ', isError: false });
  });

  it('reads the error state from isError or from the JSON itself', () => {
    assert.equal(actualValue({ structured: { ok: true }, isError: true }).isError, true);
    assert.equal(
      actualValue({ text: ['{"error": "Non-pending order cannot be cancelled"}'] }).isError,
      true,
    );
    assert.equal(looksLikeError({ error: null }), false);
    assert.equal(looksLikeError({ error: false }), false);
    assert.equal(looksLikeError({ error: '' }), true);
    assert.equal(looksLikeError({ isError: true }), true);
    assert.equal(looksLikeError({ error_tool_call: { code: 'X' } }), true);
    assert.equal(looksLikeError([{ error: 'x' }]), false);
    assert.equal(rehearsalValue({ error: 'unknown tool: x' }).isError, true);
  });
});

describe('fidelity on 10 MB documents', () => {
  it('diffs, scores and canonicalises two 10 MB documents without throwing', () => {
    const make = (n: number, drift: number) => ({
      orders: Array.from({ length: n }, (_, i) => ({
        order_id: `#W${i}`,
        status: i % drift ? 'delivered' : 'pending',
        items: [{ sku: `S${i}`, price: (i % 991) + 0.5 }],
        tags: ['retail', `batch-${i % 7}`],
      })),
    });
    const n = 100_000;
    const r = make(n, 50);
    const a = make(n, 60);
    assert.ok(canonicalJson(a).length > 10 * 1024 * 1024);
    const diff = structuralDiff(r, a);
    const expectedChanges = Array.from(
      { length: n },
      (_, i) => (i % 50 === 0) !== (i % 60 === 0),
    ).filter(Boolean).length;
    assert.equal(diff.length, expectedChanges);
    const s = jsonScores(r, a, false, false);
    assert.equal(s.exactMatch, false);
    assert.ok(s.fieldF1 > 0.99 && s.fieldF1 < 1);
    assert.equal(s.keyJaccard, 1);
  });
});
