import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../base/errors';
import { isJsonObject, nestsDeeperThan } from '../../base/json';
import type { OutsideNumberSpec } from '../../base/numbers';
import { numberFaultError, readNumber, requireNumber } from '../../base/numbers';
import { OUTSIDE_NUMBERS } from '../../base/outsideNumbers';
import type { ModelShape } from './memoryPlan';

/** config.json is read up to this size (the trainer's bound on it, too). */
export const MAX_CONFIG_BYTES = 4 * 2 ** 20;

/**
 * The shape of a base model from its config.json (any Hugging Face decoder; MoE by num_experts or
 * num_local_experts), every number within its documented range (docs/reliability.md). A file that
 * is missing, too large, too deep or not an object is a coded error naming the file.
 */
export async function readBaseModelShape(folder: string): Promise<ModelShape> {
  const file = path.join(folder, 'config.json');
  let text: string;
  try {
    const size = (await fs.stat(file)).size;
    if (size > MAX_CONFIG_BYTES)
      throw new StudioError(
        'MODEL_FILE_BROKEN',
        `${file} is ${size} bytes; a config.json is read up to ${MAX_CONFIG_BYTES / 2 ** 20} MiB. Name the model's own config.json.`,
      );
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if (err instanceof StudioError) throw err;
    throw new StudioError(
      'MODEL_FILE_MISSING',
      `The base model ${folder} has no readable config.json: name a Hugging Face model folder as the run's base.`,
    );
  }
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (err) {
    throw new StudioError('MODEL_FILE_BROKEN', `${file} is not JSON (${(err as Error).message}).`);
  }
  if (!isJsonObject(config) || nestsDeeperThan(config))
    throw new StudioError(
      'MODEL_FILE_BROKEN',
      `${file} is not a JSON object within the nesting bound; name the model's own config.json.`,
    );
  // Multimodal checkpoints (Qwen2.5-VL, Gemma 3) keep the decoder's sizes in text_config.
  const textConfig = config['text_config'];
  const decoder =
    config['hidden_size'] === undefined && isJsonObject(textConfig) ? textConfig : config;
  return shapeOfConfig(decoder, file);
}

/** {@link readBaseModelShape} of an already parsed config; `where` names it in errors. */
export function shapeOfConfig(config: Record<string, unknown>, where = 'config.json'): ModelShape {
  // A size without a fallback is required: absent, it is "nothing" out of range, never NaN.
  const read = (key: string, spec: OutsideNumberSpec, fallback?: number): number => {
    const value = config[key] ?? fallback;
    const read = readNumber(value, { ...spec, name: key });
    if (!read.ok) throw numberFaultError(read.error, where);
    return read.value;
  };
  const hiddenSize = read('hidden_size', OUTSIDE_NUMBERS.modelHiddenSize);
  const heads = read('num_attention_heads', OUTSIDE_NUMBERS.modelHeads);
  const intermediateSize = read(
    'intermediate_size',
    OUTSIDE_NUMBERS.modelIntermediateSize,
    4 * hiddenSize,
  );
  const expertCount = config['num_experts'] ?? config['num_local_experts'];
  const shape: ModelShape = {
    hiddenSize,
    intermediateSize,
    layers: read('num_hidden_layers', OUTSIDE_NUMBERS.modelLayers),
    heads,
    keyValueHeads: read(
      'num_key_value_heads',
      { ...OUTSIDE_NUMBERS.modelKeyValueHeads, max: heads },
      heads,
    ),
    headDim: read('head_dim', OUTSIDE_NUMBERS.modelHeadDim, Math.floor(hiddenSize / heads)),
    vocabSize: read('vocab_size', OUTSIDE_NUMBERS.modelVocab),
    // Hugging Face's default ties them; Llama-style configs say false.
    tiedEmbeddings: config['tie_word_embeddings'] !== false,
  };
  if (expertCount !== undefined && expertCount !== null && expertCount !== 0) {
    const count = requireNumber(expertCount, OUTSIDE_NUMBERS.modelExperts, undefined, {
      where,
    }) as number;
    shape.experts = {
      count,
      intermediateSize: read(
        'moe_intermediate_size',
        OUTSIDE_NUMBERS.modelIntermediateSize,
        intermediateSize,
      ),
      perToken: read(
        'num_experts_per_tok',
        { ...OUTSIDE_NUMBERS.modelExpertsPerToken, max: count },
        1,
      ),
    };
  }
  return shape;
}
