import * as assert from 'node:assert/strict';
import { canonicalJson, canonicalNumber, compareKeys } from '../../src/core/base/canonicalJson';
import type { JsonValue } from '../../src/core/base/json';

describe('canonical JSON', () => {
  it('does not depend on the insertion order of keys', () => {
    const a = { status: 'pending', order_id: '#W1', items: [{ qty: 1, sku: 'A' }] };
    const b = { items: [{ sku: 'A', qty: 1 }], order_id: '#W1', status: 'pending' };
    assert.equal(canonicalJson(a), canonicalJson(b));
    assert.equal(
      canonicalJson(a),
      '{"items":[{"qty":1,"sku":"A"}],"order_id":"#W1","status":"pending"}',
    );
  });

  it('keeps array order (arrays are sequences, not sets)', () => {
    assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
  });

  it('writes -0 as 0 and numbers in their shortest round-trip form', () => {
    assert.equal(canonicalNumber(-0), '0');
    assert.equal(canonicalNumber(0.1 + 0.2), '0.30000000000000004');
    assert.equal(canonicalNumber(1e21), '1e+21');
    assert.equal(canonicalNumber(5e-7), '5e-7');
    assert.equal(canonicalJson({ a: -0 }), canonicalJson({ a: 0 }));
  });

  it('writes values that JSON cannot hold as null, and skips undefined properties', () => {
    assert.equal(canonicalNumber(Number.NaN), 'null');
    assert.equal(canonicalNumber(Number.POSITIVE_INFINITY), 'null');
    const value = { a: undefined, b: 1 } as unknown as JsonValue;
    assert.equal(canonicalJson(value), '{"b":1}');
    assert.equal(canonicalJson([undefined] as unknown as JsonValue), '[null]');
  });

  it('orders keys by UTF-16 code units, as the Python trainer is told to', () => {
    assert.deepEqual(['b', 'a', 'B', '10', '9', '\uff5e', '\u{1F600}'].sort(compareKeys), [
      '10',
      '9',
      'B',
      'a',
      'b',
      '\u{1F600}',
      '\uff5e',
    ]);
    assert.equal(compareKeys('a', 'a'), 0);
  });

  it('handles 100,000-deep nesting without overflowing the stack', () => {
    const depth = 100_000;
    let deep: JsonValue = 'leaf';
    for (let i = 0; i < depth; i++) deep = i % 2 ? [deep] : { k: deep };
    const text = canonicalJson(deep);
    assert.equal(
      text.length,
      (depth / 2) * ('{"k":'.length + '}'.length) + (depth / 2) * 2 + '"leaf"'.length,
    );
    assert.ok(text.startsWith('[{"k":[{"k":'));
  });

  it('indents nested containers by the given width', () => {
    let deep: JsonValue = 1;
    for (let i = 0; i < 1000; i++) deep = [deep];
    const lines = canonicalJson(deep, { indent: 2 }).split('\n');
    assert.equal(lines.length, 2001);
    assert.equal(lines[1000], ' '.repeat(2000) + '1');
    assert.equal(canonicalJson({ a: [1] }, { indent: 4 }), '{\n    "a": [\n        1\n    ]\n}');
  });
});
