import * as ort from 'onnxruntime-node';
import type { PastTensors } from './kvCache';

/** Positions a slot grows by (and is rounded up to) when a row needs more. */
export const SLOT_LENGTH_STEP = 64;

function roundUp(positions: number): number {
  return Math.ceil(Math.max(positions, 1) / SLOT_LENGTH_STEP) * SLOT_LENGTH_STEP;
}

/**
 * The KV cache of the slots graph (`model_slots.onnx`): per layer, one buffer of keys and one of
 * values, `[rows, kvHeads, slotLength, headDim]`, a row (slot) per sequence. The graph reads a
 * contiguous range of rows in place (a `subarray` view, no copy) and returns only the new tokens' keys
 * and values, which {@link writeNew} stores at each row's own length. Nothing is copied per step:
 * rows move only when a sequence leaves (the last row fills its slot), and the buffers are rebuilt
 * only when they grow or shrink (by {@link SLOT_LENGTH_STEP} positions or doubling rows).
 */
export class SlotCache {
  private keys: Float32Array[] = [];
  private values: Float32Array[] = [];
  private capacity = 0;
  private slot = 0;
  /** Valid positions of each row. */
  private readonly lengths: number[] = [];

  constructor(
    readonly layers: number,
    readonly kvHeads: number,
    readonly headDim: number,
  ) {}

  /** Positions a slot holds (the graph's `cache_length`). */
  get slotLength(): number {
    return this.slot;
  }

  /** Rows in use. */
  get rows(): number {
    return this.lengths.length;
  }

  /** Valid positions of a row. */
  lengthOf(row: number): number {
    return this.lengths[row];
  }

  private rowSize(slot = this.slot): number {
    return this.kvHeads * slot * this.headDim;
  }

  /** Adds an empty row at the end; returns its index. */
  append(): number {
    this.reserve(this.rows + 1, this.slot);
    this.lengths.push(0);
    return this.rows - 1;
  }

  /** Makes room for `rows` rows of `positions` positions at least (rebuilding the buffers when they are too small). */
  reserve(rows: number, positions: number): void {
    const slot = roundUp(positions);
    if (slot <= this.slot && rows <= this.capacity) return;
    const capacity = rows <= this.capacity ? this.capacity : Math.max(rows, 2 * this.capacity, 4);
    this.rebuild(capacity, Math.max(slot, this.slot));
  }

  /**
   * Gives memory back once the slots are much longer than `positions` (at least the longest row):
   * a pass reads every slot whole, so a slot far longer than its rows costs every step.
   */
  fit(positions: number): void {
    const slot = roundUp(Math.max(positions, this.longest()));
    // Not at every row that leaves: a rebuild copies every row, so only once it saves a quarter of a slot or more.
    if (this.slot > slot + Math.max(4 * SLOT_LENGTH_STEP, this.slot / 4))
      this.rebuild(this.capacity, slot);
  }

  /** The longest row's length. */
  longest(): number {
    let n = 0;
    for (const l of this.lengths) n = Math.max(n, l);
    return n;
  }

  private rebuild(capacity: number, slot: number): void {
    const size = this.kvHeads * slot * this.headDim;
    const copy = (old: Float32Array[]) =>
      Array.from({ length: this.layers }, (_, layer) => {
        const next = new Float32Array(capacity * size);
        const before = old[layer];
        if (before)
          for (let r = 0; r < this.rows; r++)
            for (let h = 0; h < this.kvHeads; h++) {
              const from = (r * this.kvHeads + h) * this.slot * this.headDim;
              next.set(
                before.subarray(from, from + this.lengths[r] * this.headDim),
                (r * this.kvHeads + h) * slot * this.headDim,
              );
            }
        return next;
      });
    this.keys = copy(this.keys);
    this.values = copy(this.values);
    this.capacity = capacity;
    this.slot = slot;
  }

  /** The graph's `past_key_values.*` inputs: rows `[from, to)`, read in place. */
  views(from: number, to: number): PastTensors {
    const size = this.rowSize();
    const dims = [to - from, this.kvHeads, this.slot, this.headDim];
    const out: PastTensors = {};
    for (let i = 0; i < this.layers; i++) {
      out[`past_key_values.${i}.key`] = new ort.Tensor(
        'float32',
        this.keys[i].subarray(from * size, to * size),
        dims,
      );
      out[`past_key_values.${i}.value`] = new ort.Tensor(
        'float32',
        this.values[i].subarray(from * size, to * size),
        dims,
      );
    }
    return out;
  }

  /**
   * Stores a pass's new keys and values (`new.{i}.key|value`, `[batch, kvHeads, sequence, headDim]`):
   * batch row `b` is buffer row `from + b`, and its first `counts[b]` tokens go after that row's
   * length, which grows by as many.
   */
  writeNew(
    outputs: ort.InferenceSession.OnnxValueMapType,
    from: number,
    counts: readonly number[],
  ): void {
    const { headDim: d, kvHeads: kv, slot } = this;
    for (let i = 0; i < this.layers; i++) {
      for (const [kind, buffers] of [
        ['key', this.keys],
        ['value', this.values],
      ] as const) {
        const t = outputs[`new.${i}.${kind}`] as ort.Tensor;
        const seq = t.dims[2];
        const src = t.data as Float32Array;
        const dst = buffers[i];
        counts.forEach((count, b) => {
          const row = from + b;
          for (let h = 0; h < kv; h++) {
            const at = (b * kv + h) * seq * d;
            dst.set(
              src.subarray(at, at + count * d),
              ((row * kv + h) * slot + this.lengths[row]) * d,
            );
          }
        });
      }
    }
    counts.forEach((count, b) => (this.lengths[from + b] += count));
  }

  /**
   * Stores positions `[from, from + count)` of a batch-1 pass of the main graph (`present.{i}.*`,
   * `[1, kvHeads, from + count, headDim]`) in a row that holds `from`.
   */
  writePresent(
    outputs: ort.InferenceSession.OnnxValueMapType,
    row: number,
    from: number,
    count: number,
  ): void {
    const { headDim: d, kvHeads: kv, slot } = this;
    for (let i = 0; i < this.layers; i++)
      for (const [kind, buffers] of [
        ['key', this.keys],
        ['value', this.values],
      ] as const) {
        const t = outputs[`present.${i}.${kind}`] as ort.Tensor;
        const total = t.dims[2];
        const src = t.data as Float32Array;
        for (let h = 0; h < kv; h++)
          buffers[i].set(
            src.subarray((h * total + from) * d, (h * total + from + count) * d),
            ((row * kv + h) * slot + from) * d,
          );
      }
    this.lengths[row] = from + count;
  }

  /** Copies row `from`'s first `length` positions into row `to` (which then holds that many). */
  copyRow(from: number, to: number, length = this.lengths[from]): void {
    if (from === to) return;
    const { headDim: d, kvHeads: kv, slot } = this;
    for (const buffers of [this.keys, this.values])
      for (const buf of buffers)
        for (let h = 0; h < kv; h++)
          buf.copyWithin(
            (to * kv + h) * slot * d,
            (from * kv + h) * slot * d,
            ((from * kv + h) * slot + length) * d,
          );
    this.lengths[to] = length;
  }

  /** Exchanges two rows. */
  swap(a: number, b: number): void {
    if (a === b) return;
    const spare = this.append();
    this.copyRow(a, spare);
    this.copyRow(b, a);
    this.copyRow(spare, b);
    this.lengths.pop();
  }

  /** Drops the last row. */
  pop(): void {
    this.lengths.pop();
  }

  /** A row's first `length` positions as a compact batch-1 cache (an idle session keeps it). */
  copyOut(row: number, length: number): PastTensors {
    const { headDim: d, kvHeads: kv, slot } = this;
    const out: PastTensors = {};
    for (let i = 0; i < this.layers; i++)
      for (const [kind, buf] of [
        ['key', this.keys[i]],
        ['value', this.values[i]],
      ] as const) {
        const dst = new Float32Array(kv * length * d);
        for (let h = 0; h < kv; h++) {
          const from = (row * kv + h) * slot * d;
          dst.set(buf.subarray(from, from + length * d), h * length * d);
        }
        out[`past_key_values.${i}.${kind}`] = new ort.Tensor('float32', dst, [1, kv, length, d]);
      }
    return out;
  }

  /** Fills a row with the first `length` positions of a compact batch-1 cache. */
  copyIn(row: number, past: PastTensors, length: number): void {
    this.reserve(this.rows, length + 1);
    const { headDim: d, kvHeads: kv, slot } = this;
    for (let i = 0; i < this.layers; i++)
      for (const [kind, buf] of [
        ['key', this.keys[i]],
        ['value', this.values[i]],
      ] as const) {
        const t = past[`past_key_values.${i}.${kind}`];
        const s = t.dims[2];
        const src = t.data as Float32Array;
        for (let h = 0; h < kv; h++)
          buf.set(src.subarray(h * s * d, (h * s + length) * d), (row * kv + h) * slot * d);
      }
    this.lengths[row] = length;
  }

  clear(): void {
    this.keys = [];
    this.values = [];
    this.capacity = 0;
    this.slot = 0;
    this.lengths.length = 0;
  }
}
