import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import type { JsonValue } from '../../src/core/base/json';
import type { PathSegment } from '../../src/core/fidelity/jsonPath';
import {
  formatJsonPath,
  formatSchemaPath,
  MAX_PATH_DEPTH,
  parseJsonPath,
} from '../../src/core/fidelity/jsonPath';
import type { DiffEntry } from '../../src/core/fidelity/structuralDiff';
import { structuralDiff, summarizeDiff } from '../../src/core/fidelity/structuralDiff';

const brief = (d: DiffEntry[]) =>
  d.map((e) => ({ kind: e.kind, path: e.path, rehearsal: e.rehearsal, actual: e.actual }));

function nest(depth: number, leaf: JsonValue): JsonValue {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe('structural diff', () => {
  it('finds nothing between equal documents, whatever their key order', () => {
    assert.deepEqual(
      structuralDiff({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 }),
      [],
    );
    assert.deepEqual(structuralDiff(-0, 0), []);
    assert.deepEqual(structuralDiff({}, {}), []);
  });

  it('reports added, removed, changed and retyped paths in document order', () => {
    const rehearsal = {
      status: 'pending',
      note: 'x',
      items: [1, 2],
      refund: { amount: 70.35, method: 'card' },
    };
    const actual = {
      status: 'delivered',
      items: [1],
      refund: { amount: '70.35', method: 'card' },
      tracking: null,
    };
    assert.deepEqual(brief(structuralDiff(rehearsal, actual)), [
      { kind: 'removed', path: '$.items[1]', rehearsal: 2, actual: undefined },
      { kind: 'removed', path: '$.note', rehearsal: 'x', actual: undefined },
      { kind: 'typeChanged', path: '$.refund.amount', rehearsal: 70.35, actual: '70.35' },
      { kind: 'changed', path: '$.status', rehearsal: 'pending', actual: 'delivered' },
      { kind: 'added', path: '$.tracking', rehearsal: undefined, actual: null },
    ]);
  });

  it('compares arrays by index', () => {
    assert.deepEqual(brief(structuralDiff([1, 2, 3], [0, 1, 2, 3])), [
      { kind: 'changed', path: '$[0]', rehearsal: 1, actual: 0 },
      { kind: 'changed', path: '$[1]', rehearsal: 2, actual: 1 },
      { kind: 'changed', path: '$[2]', rehearsal: 3, actual: 2 },
      { kind: 'added', path: '$[3]', rehearsal: undefined, actual: 3 },
    ]);
  });

  it('reports a type change once, without descending', () => {
    assert.deepEqual(brief(structuralDiff({ a: { b: 1 } }, { a: [1] })), [
      { kind: 'typeChanged', path: '$.a', rehearsal: { b: 1 }, actual: [1] },
    ]);
    assert.deepEqual(
      structuralDiff([], {}).map((e) => [e.kind, e.path]),
      [['typeChanged', '$']],
    );
    assert.deepEqual(
      structuralDiff(null, { a: 1 }).map((e) => e.kind),
      ['typeChanged'],
    );
  });

  it('writes odd keys in bracket form and keeps the segments', () => {
    const d = structuralDiff(
      { 'a b': 1, '': 1, '0': 1, é: 1, 'say "hi"': 1, ok: { $x: 1 } },
      { 'a b': 2, '': 2, '0': 2, é: 2, 'say "hi"': 2, ok: { $x: 2 } },
    );
    assert.deepEqual(
      d.map((e) => e.path),
      ['$[""]', '$["0"]', '$["a b"]', '$.ok.$x', '$["say \\"hi\\""]', '$["é"]'],
    );
    assert.deepEqual(
      d.map((e) => e.segments),
      [[''], ['0'], ['a b'], ['ok', '$x'], ['say "hi"'], ['é']],
    );
  });

  it('treats an own "__proto__" key as data', () => {
    const r = JSON.parse('{"__proto__": {"x": 1}}') as JsonValue;
    const a = JSON.parse('{"__proto__": {"x": 2}}') as JsonValue;
    assert.deepEqual(
      structuralDiff(r, a).map((e) => e.path),
      ['$.__proto__.x'],
    );
  });

  it('counts entries by kind', () => {
    const d = structuralDiff({ a: 1, b: 1, c: 's' }, { a: 2, c: 1, d: 1 });
    assert.deepEqual(summarizeDiff(d), { added: 1, removed: 1, changed: 1, typeChanged: 1 });
  });

  it(`compares subtrees below depth ${MAX_PATH_DEPTH} whole, so a 100,000-deep pair finishes`, () => {
    const shallow = structuralDiff(nest(MAX_PATH_DEPTH - 1, 1), nest(MAX_PATH_DEPTH - 1, 2));
    assert.equal(shallow.length, 1);
    assert.equal(shallow[0].segments.length, MAX_PATH_DEPTH - 1);
    assert.equal(shallow[0].actual, 2);
    const deep = structuralDiff(nest(100_000, 1), nest(100_000, 2));
    assert.equal(deep.length, 1);
    assert.equal(deep[0].kind, 'changed');
    assert.equal(deep[0].segments.length, MAX_PATH_DEPTH);
    assert.deepEqual(structuralDiff(nest(100_000, 1), nest(100_000, 1)), []);
  });
});

describe('JSON paths', () => {
  it('formats identifiers with dots, indices and other keys in brackets', () => {
    assert.equal(formatJsonPath([]), '$');
    assert.equal(formatJsonPath(['orders', 0, 'status']), '$.orders[0].status');
    assert.equal(formatJsonPath(['a b', 'x-y', '1st', '_ok', '$']), '$["a b"]["x-y"]["1st"]._ok.$');
  });

  it('generalises indices in schema paths, and only indices', () => {
    assert.equal(formatSchemaPath(['items', 3, 'sku']), '$.items[*].sku');
    assert.equal(formatSchemaPath(['a[-1]b', 0]), '$["a[-1]b"][*]');
    assert.notEqual(formatSchemaPath(['a[-1]b']), formatSchemaPath(['a[*]b']));
  });

  it('parses what it formats', () => {
    assert.deepEqual(parseJsonPath('$.orders[0]["a b"].x'), ['orders', 0, 'a b', 'x']);
    assert.deepEqual(parseJsonPath('$'), []);
    assert.deepEqual(parseJsonPath('$["say \\"hi\\""]'), ['say "hi"']);
  });

  it('rejects text that is not such a path', () => {
    for (const bad of [
      '',
      'a',
      '$.',
      '$..a',
      '$[',
      '$[x]',
      '$["open]',
      '$.1a',
      '$[-1]',
      '$ .a',
      '$["a"',
      '$["\\x"]',
    ]) {
      assert.equal(parseJsonPath(bad), undefined, bad);
    }
  });

  it('round-trips any path (property)', () => {
    const segment: fc.Arbitrary<PathSegment> = fc.oneof(
      fc.nat(),
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom('a b', '"', '\\', ']', '[0]', '.', '$', ''),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), (segments) => {
        assert.deepEqual(parseJsonPath(formatJsonPath(segments)), segments);
      }),
      { numRuns: 1000 },
    );
  });
});
