import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { describeOutsideValue } from '../../base/json';
import { StudioError } from '../../base/errors';
import { numberFaultError, readNumber } from '../../base/numbers';
import type { OutsideNumberSpec } from '../../base/numbers';
import { OUTSIDE_NUMBERS } from '../../base/outsideNumbers';

/** What the policy host needs to know of a model folder (Hugging Face layout). */
export interface ModelFolderInfo {
  dir: string;
  numLayers: number;
  numKeyValueHeads: number;
  headDim: number;
  vocabSize: number;
  maxPositions: number;
  /** Tokens that end a generation. */
  eosTokenIds: number[];
  padTokenId: number;
  /** The ONNX file, relative to `dir`. */
  onnxFile: string;
  /** The cascade graph (n samples over one shared prompt cache), relative to `dir`; absent in older exports. */
  cascadeFile?: string;
  /** The slots graph (KV cache in place, see slotScheduler.ts), relative to `dir`; absent in older exports. */
  slotsFile?: string;
  hasChatTemplate: boolean;
}

const REQUIRED_FILES = [
  'config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'generation_config.json',
  'onnx/model.onnx',
];

async function readJson(dir: string, file: string): Promise<Record<string, unknown>> {
  const full = path.join(dir, file);
  let text: string;
  try {
    text = await fs.readFile(full, 'utf8');
  } catch {
    throw new StudioError(
      'MODEL_FILE_MISSING',
      `The model folder ${dir} has no ${file}. A policy folder needs ${REQUIRED_FILES.join(', ')} (export one with \`python3 -m trainer export\`).`,
    );
  }
  try {
    const value = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new Error('not an object');
    return value as Record<string, unknown>;
  } catch (err) {
    throw new StudioError(
      'MODEL_FILE_BROKEN',
      `${full} is not a valid JSON object (${(err as Error).message}); re-export the model.`,
    );
  }
}

function num(
  config: Record<string, unknown>,
  key: string,
  file: string,
  fallback?: number,
): number {
  const v = config[key];
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  // Present but not a number ("2", a list) is a broken file, not an absent key: a fallback would
  // give the graph caches of the wrong shape.
  if (v !== undefined && v !== null)
    throw new StudioError(
      'MODEL_FILE_BROKEN',
      `${file} has "${key}": ${describeOutsideValue(v)}; it must be a number. Re-export the model.`,
    );
  if (fallback !== undefined) return fallback;
  throw new StudioError(
    'MODEL_FILE_BROKEN',
    `${file} lacks the number "${key}"; re-export the model.`,
  );
}

/** The largest shapes a model folder may declare (far above any released model's). */
export const MAX_SHAPE = {
  layers: OUTSIDE_NUMBERS.modelLayers.max,
  heads: OUTSIDE_NUMBERS.modelHeads.max,
  headDim: OUTSIDE_NUMBERS.modelHeadDim.max,
  vocab: OUTSIDE_NUMBERS.modelVocab.max,
  positions: OUTSIDE_NUMBERS.modelPositions.max,
};

/** Written by `python3 -m trainer export` beside the main graph unless `export.cascade` is false. */
const CASCADE_FILE = 'onnx/model_cascade.onnx';
/** Written by `python3 -m trainer export` beside the main graph unless `export.slots` is false. */
const SLOTS_FILE = 'onnx/model_slots.onnx';

/** Whether `file` exists and is large enough to be an ONNX graph at all. */
async function usableFile(dir: string, file: string): Promise<boolean> {
  try {
    return (await fs.stat(path.join(dir, file))).size >= 64;
  } catch {
    return false;
  }
}

function ids(v: unknown): number[] {
  if (typeof v === 'number') return [v];
  if (Array.isArray(v)) return v.filter((x): x is number => typeof x === 'number');
  return [];
}

/**
 * Checks a model folder and reads what generation needs. A missing or broken file is named in the
 * error, with what to do.
 */
export async function readModelFolder(dir: string): Promise<ModelFolderInfo> {
  let stat;
  try {
    stat = await fs.stat(dir);
  } catch {
    throw new StudioError(
      'MODEL_NOT_FOUND',
      `No model folder at ${dir}. Point the policy at a folder with ${REQUIRED_FILES.join(', ')}.`,
    );
  }
  if (!stat.isDirectory())
    throw new StudioError(
      'MODEL_NOT_FOUND',
      `${dir} is not a folder. Point the policy at a model folder (Hugging Face layout).`,
    );
  const config = await readJson(dir, 'config.json');
  const generation = await readJson(dir, 'generation_config.json');
  const tokenizerConfig = await readJson(dir, 'tokenizer_config.json');
  await readJson(dir, 'tokenizer.json');
  const onnxFile = 'onnx/model.onnx';
  if (!(await usableFile(dir, onnxFile))) {
    throw new StudioError(
      'MODEL_FILE_MISSING',
      `The model folder ${dir} has no usable ${onnxFile}; export the model with \`python3 -m trainer export\`.`,
    );
  }
  // Weights past protobuf's 2 GB live beside the graph; config.json says so for transformers.js.
  const jsConfig = config['transformers.js_config'] as
    { use_external_data_format?: unknown } | undefined;
  if (jsConfig?.use_external_data_format) {
    try {
      await fs.access(path.join(dir, `${onnxFile}_data`));
    } catch {
      throw new StudioError(
        'MODEL_FILE_MISSING',
        `The model folder ${dir} has no ${onnxFile}_data (its config.json says the weights are stored there); copy it beside ${onnxFile} or re-export the model.`,
      );
    }
  }
  const cascadeFile = (await usableFile(dir, CASCADE_FILE)) ? CASCADE_FILE : undefined;
  const slotsFile = (await usableFile(dir, SLOTS_FILE)) ? SLOTS_FILE : undefined;
  const heads = num(config, 'num_attention_heads', 'config.json');
  const hidden = num(config, 'hidden_size', 'config.json');
  const eos = [...new Set([...ids(generation['eos_token_id']), ...ids(config['eos_token_id'])])];
  if (eos.length === 0)
    throw new StudioError(
      'MODEL_FILE_BROKEN',
      `Neither generation_config.json nor config.json of ${dir} names an eos_token_id; generation could not stop.`,
    );
  const shape = {
    numLayers: num(config, 'num_hidden_layers', 'config.json'),
    numKeyValueHeads: num(config, 'num_key_value_heads', 'config.json', heads),
    headDim: num(config, 'head_dim', 'config.json', hidden / heads),
    vocabSize: num(config, 'vocab_size', 'config.json'),
    maxPositions: num(config, 'max_position_embeddings', 'config.json', 4096),
  };
  // Numbers no real model has would make the host allocate without end before the first token.
  const inRange = (value: number, spec: OutsideNumberSpec) => {
    const read = readNumber(value, spec);
    if (!read.ok)
      throw numberFaultError(read.error, `config.json of ${dir}`, 'Re-export the model.');
  };
  inRange(shape.numLayers, OUTSIDE_NUMBERS.modelLayers);
  inRange(heads, OUTSIDE_NUMBERS.modelHeads);
  inRange(shape.numKeyValueHeads, { ...OUTSIDE_NUMBERS.modelKeyValueHeads, max: heads });
  inRange(shape.headDim, OUTSIDE_NUMBERS.modelHeadDim);
  inRange(shape.vocabSize, OUTSIDE_NUMBERS.modelVocab);
  inRange(shape.maxPositions, OUTSIDE_NUMBERS.modelPositions);
  const padTokenId = ids(generation['pad_token_id'])[0] ?? ids(config['pad_token_id'])[0] ?? eos[0];
  // A token id past the vocabulary would index outside the logits.
  for (const id of [...eos, padTokenId])
    inRange(id, { ...OUTSIDE_NUMBERS.modelTokenId, max: shape.vocabSize - 1 });
  return {
    dir,
    ...shape,
    eosTokenIds: eos,
    padTokenId,
    onnxFile,
    cascadeFile,
    slotsFile,
    hasChatTemplate: typeof tokenizerConfig['chat_template'] === 'string',
  };
}
