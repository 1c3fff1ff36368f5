// The slot cache of the slots graph (src/core/policy/onnx/slotCache.ts): a row per sequence, read in
// place by the graph, rows moved only when one leaves, buffers rebuilt only when they grow or shrink.
// Whatever it does, each row keeps exactly its own keys and values. The scheduler over it, with the
// real graphs: policy-batch.test.ts.
import * as assert from 'node:assert/strict';
import * as ort from 'onnxruntime-node';
import type { PastTensors } from '../../src/core/policy/onnx/kvCache';
import { SLOT_LENGTH_STEP, SlotCache } from '../../src/core/policy/onnx/slotCache';

const LAYERS = 2;
const HEADS = 2;
const DIM = 4;

/** A compact batch-1 cache of `length` positions whose every value says row `tag`, layer, kind, head, position. */
function pastOf(tag: number, length: number): PastTensors {
  const out: PastTensors = {};
  for (let i = 0; i < LAYERS; i++)
    for (const [k, kind] of ['key', 'value'].entries()) {
      const data = new Float32Array(HEADS * length * DIM);
      for (let h = 0; h < HEADS; h++)
        for (let p = 0; p < length; p++)
          for (let d = 0; d < DIM; d++)
            data[(h * length + p) * DIM + d] = tag * 1e4 + i * 1e3 + k * 500 + h * 100 + p + d / 10;
      out[`past_key_values.${i}.${kind}`] = new ort.Tensor('float32', data, [
        1,
        HEADS,
        length,
        DIM,
      ]);
    }
  return out;
}

/** The first `length` positions of a compact cache. */
function prefix(past: PastTensors, length: number): Record<string, number[]> {
  return Object.fromEntries(
    Object.entries(past).map(([name, t]) => {
      const s = t.dims[2];
      const data = t.data as Float32Array;
      const kept: number[] = [];
      for (let h = 0; h < HEADS; h++)
        kept.push(...data.subarray(h * s * DIM, (h * s + length) * DIM));
      return [name, kept];
    }),
  );
}

describe('slot cache: a row of KV cache per sequence, read in place', () => {
  it('keeps every row its own values through growth, moves, swaps and shrinking', () => {
    const cache = new SlotCache(LAYERS, HEADS, DIM);
    const lengths = [3, 70, 10, 600, 1];
    lengths.forEach((length, tag) => cache.copyIn(cache.append(), pastOf(tag, length), length));
    assert.equal(cache.rows, 5);
    assert.equal(cache.slotLength, 640, 'rounded up to a whole step');
    assert.equal(640 % SLOT_LENGTH_STEP, 0);
    const expect = (row: number, tag: number, length: number) =>
      assert.deepEqual(
        prefix(cache.copyOut(row, length), length),
        prefix(pastOf(tag, length), length),
      );
    lengths.forEach((length, tag) => expect(tag, tag, length));
    // The longest row leaves (the last fills its slot), then the rows shrink to what is left.
    cache.copyRow(4, 3);
    cache.pop();
    cache.fit(cache.longest() + 1);
    assert.equal(
      cache.slotLength,
      128,
      'a slot of 640 positions for rows of at most 70 was given back',
    );
    expect(3, 4, 1);
    cache.swap(0, 1);
    expect(0, 1, 70);
    expect(1, 0, 3);
    expect(2, 2, 10);
  });

  it("a pass's view reads the rows where they lie, and its new keys land after each row's length", () => {
    const cache = new SlotCache(LAYERS, HEADS, DIM);
    for (const tag of [0, 1]) cache.copyIn(cache.append(), pastOf(tag, 5), 5);
    cache.reserve(2, 8);
    const view = cache.views(0, 2);
    assert.deepEqual(view['past_key_values.0.key'].dims, [2, HEADS, cache.slotLength, DIM]);
    // The graph's new.{i}.* outputs: [batch, heads, sequence, dim]; row 0 gets 2 tokens, row 1 one.
    const outputs: Record<string, ort.Tensor> = {};
    for (let i = 0; i < LAYERS; i++)
      for (const kind of ['key', 'value'])
        outputs[`new.${i}.${kind}`] = new ort.Tensor(
          'float32',
          Float32Array.from({ length: 2 * HEADS * 2 * DIM }, (_, j) => -1 - j),
          [2, HEADS, 2, DIM],
        );
    cache.writeNew(outputs, 0, [2, 1]);
    assert.deepEqual([cache.lengthOf(0), cache.lengthOf(1)], [7, 6]);
    // Written in place: the view made before the write sees it (no copy between them).
    const key = view['past_key_values.0.key'].data as Float32Array;
    const at = (row: number, head: number, position: number) =>
      key[((row * HEADS + head) * cache.slotLength + position) * DIM];
    assert.equal(at(0, 0, 5), -1);
    assert.equal(at(0, 0, 6), -1 - DIM);
    assert.equal(at(1, 1, 5), -1 - (2 * HEADS + 2) * DIM, "row 1's head 1, its first new token");
    assert.equal(at(1, 0, 4), 1e4 + 4, 'the cache before the new tokens is untouched');
  });
});
