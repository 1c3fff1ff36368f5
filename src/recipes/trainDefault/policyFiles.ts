import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';

/** The model folder's files besides ONNX. */
export const MODEL_FILES = [
  'config.json',
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
];

/**
 * The ONNX files of an export that are in `dir`: the graph, its weights when stored apart
 * (export.external_data), model_cascade.onnx (the graph the policy host decodes n rehearsal samples
 * with) unless export.cascade was false, and model_slots.onnx (the graph it decodes with on the CPU,
 * the KV cache in place) unless export.slots was false.
 */
export function onnxFiles(dir: string): string[] {
  return [
    'onnx/model.onnx',
    'onnx/model.onnx_data',
    'onnx/model_cascade.onnx',
    'onnx/model_slots.onnx',
  ].filter((f) => existsSync(path.join(dir, f)));
}

/** A file's SHA-256, in hex. */
export async function sha256(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}
