import * as ort from 'onnxruntime-node';
import type { PastTensors } from './kvCache';

const int64 = (values: BigInt64Array, dims: number[]) => new ort.Tensor('int64', values, dims);

/**
 * Inputs of one forward pass: `batch` rows of `ids.length / batch` new tokens after `pastLength`
 * cached ones (the same positions in every row; nothing is padding). With a `prefix` (the prompt's
 * cache, batch 1) they are the cascade graph's, which has no attention mask and always positions.
 */
export function forwardInputs(
  ids: readonly number[],
  pastLength: number,
  batch: number,
  past: PastTensors,
  options: { positionIds: boolean; prefix?: PastTensors },
): Record<string, ort.Tensor> {
  const { prefix } = options;
  const seq = ids.length / batch;
  const total = pastLength + seq;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: int64(
      BigInt64Array.from(ids, (x) => BigInt(x)),
      [batch, seq],
    ),
    ...past,
    ...prefix,
  };
  if (!prefix)
    feeds['attention_mask'] = int64(new BigInt64Array(batch * total).fill(1n), [batch, total]);
  if (prefix || options.positionIds) {
    const positions = new BigInt64Array(batch * seq);
    for (let b = 0; b < batch; b++)
      for (let j = 0; j < seq; j++) positions[b * seq + j] = BigInt(pastLength + j);
    feeds['position_ids'] = int64(positions, [batch, seq]);
  }
  return feeds;
}

/**
 * Inputs of one decode step of rows of different lengths: row i feeds `tokens[i]` after
 * `lengths[i]` cached tokens, which sit right-aligned in a `past` of `width` positions (the first
 * `width - lengths[i]` are padding). The attention mask hides the padding and each row's position
 * continues its own sequence, so a row computes what it would alone (the plain graph only).
 */
export function paddedStepInputs(
  tokens: readonly number[],
  lengths: readonly number[],
  width: number,
  past: PastTensors,
): Record<string, ort.Tensor> {
  const batch = tokens.length;
  const mask = new BigInt64Array(batch * (width + 1));
  for (let b = 0; b < batch; b++)
    mask.fill(1n, b * (width + 1) + width - lengths[b], (b + 1) * (width + 1));
  return {
    input_ids: int64(
      BigInt64Array.from(tokens, (x) => BigInt(x)),
      [batch, 1],
    ),
    attention_mask: int64(mask, [batch, width + 1]),
    position_ids: int64(
      BigInt64Array.from(lengths, (x) => BigInt(x)),
      [batch, 1],
    ),
    ...past,
  };
}
