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
