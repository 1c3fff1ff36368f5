import * as ort from 'onnxruntime-node';

/** Past keys and values by input name (`past_key_values.{i}.key|value`), `[batch, kv_heads, seq, head_dim]`. */
export type PastTensors = Record<string, ort.Tensor>;

/** Length of the common prefix of two token sequences. */
export function commonPrefixLength(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

async function cpuData(t: ort.Tensor): Promise<Float32Array> {
  // GPU-resident outputs (webgpu) are downloaded; CPU tensors are used in place.
  const data = t.location === 'cpu' || t.location === undefined ? t.data : await t.getData();
  return data as Float32Array;
}

/** Keeps the first `length` positions of every past tensor (a prefix of the cached tokens). */
export async function truncatePast(past: PastTensors, length: number): Promise<PastTensors> {
  const out: PastTensors = {};
  for (const [name, t] of Object.entries(past)) {
    const [b, h, s, d] = t.dims as number[];
    if (length === s) {
      out[name] = t;
      continue;
    }
    const src = await cpuData(t);
    const dst = new Float32Array(b * h * length * d);
    for (let block = 0; block < b * h; block++) {
      dst.set(src.subarray(block * s * d, block * s * d + length * d), block * length * d);
    }
    out[name] = new ort.Tensor('float32', dst, [b, h, length, d]);
  }
  return out;
}

/** Repeats a batch-1 past `n` times along the batch axis (n samples share one prefill). */
export async function tilePast(past: PastTensors, n: number): Promise<PastTensors> {
  if (n === 1) return past;
  const out: PastTensors = {};
  for (const [name, t] of Object.entries(past)) {
    const [b, h, s, d] = t.dims as number[];
    if (b !== 1) throw new Error(`tilePast expects batch 1, got ${b}`);
    const src = await cpuData(t);
    const dst = new Float32Array(n * src.length);
    for (let i = 0; i < n; i++) dst.set(src, i * src.length);
    out[name] = new ort.Tensor('float32', dst, [n, h, s, d]);
  }
  return out;
}

/** An empty past for a batch: sequence length 0. */
export function emptyPast(
  layers: number,
  kvHeads: number,
  headDim: number,
  batch: number,
): PastTensors {
  const out: PastTensors = {};
  for (let i = 0; i < layers; i++) {
    for (const kind of ['key', 'value'])
      out[`past_key_values.${i}.${kind}`] = new ort.Tensor('float32', new Float32Array(0), [
        batch,
        kvHeads,
        0,
        headDim,
      ]);
  }
  return out;
}

/** The outputs of a forward pass renamed as the inputs of the next (`present.*` → `past_key_values.*`). */
export function presentsAsPast(
  outputs: ort.InferenceSession.OnnxValueMapType,
  layers: number,
): PastTensors {
  const out: PastTensors = {};
  for (let i = 0; i < layers; i++) {
    out[`past_key_values.${i}.key`] = outputs[`present.${i}.key`] as ort.Tensor;
    out[`past_key_values.${i}.value`] = outputs[`present.${i}.value`] as ort.Tensor;
  }
  return out;
}

/** A batch-1 past as the shared prompt cache of the cascade graph (`past_key_values.*` → `prefix_key_values.*`); the tensors are not copied. */
export function pastAsPrefix(past: PastTensors): PastTensors {
  const out: PastTensors = {};
  for (const [name, t] of Object.entries(past))
    out[name.replace(/^past_key_values\./, 'prefix_key_values.')] = t;
  return out;
}

/** Where one row of a gathered batch cache comes from: `length` positions of row `row` of `past`, from `start`. */
export interface RowSource {
  past: PastTensors;
  row: number;
  start: number;
  length: number;
}

/**
 * A batch cache `width` positions wide whose row i holds `sources[i]` right-aligned: its first
 * `width - length` positions are padding (zeros, which the attention mask hides). It builds the
 * decode batch when sequences join or leave it, trims padding no row needs any more, and cuts one
 * row out for its session. A single whole batch-1 source is returned as is, without a copy.
 */
export async function gatherRows(
  sources: readonly RowSource[],
  width: number,
): Promise<PastTensors> {
  const first = sources[0];
  const [b0, , s0] = Object.values(first.past)[0].dims as number[];
  if (sources.length === 1 && b0 === 1 && first.start === 0 && first.length === s0 && s0 === width)
    return first.past;
  const out: PastTensors = {};
  for (const name of Object.keys(first.past)) {
    const [, h, , d] = first.past[name].dims as number[];
    const dst = new Float32Array(sources.length * h * width * d);
    for (let i = 0; i < sources.length; i++) {
      const { past, row, start, length } = sources[i];
      const t = past[name];
      const s = t.dims[2];
      const src = await cpuData(t);
      for (let head = 0; head < h; head++) {
        const from = ((row * h + head) * s + start) * d;
        dst.set(
          src.subarray(from, from + length * d),
          ((i * h + head) * width + width - length) * d,
        );
      }
    }
    out[name] = new ort.Tensor('float32', dst, [sources.length, h, width, d]);
  }
  return out;
}
