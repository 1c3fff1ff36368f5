import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import type { JsonValue } from '../../../src/core/base/json';
import { OnnxEngine } from '../../../src/core/policy/onnx/engine';
import { readPolicySettings } from '../../../src/core/policy/policySettings';
import { GREEDY } from '../../../src/core/policy/sampling/sampling';
import { randomTestModel } from '../testModels';
import { codedOrNothing } from './targets';
import type { FuzzTarget } from './targets';
import { mutatedJson, mutatedText } from './mutate';

/**
 * A model folder's JSON files as a fuzz target: config.json, generation_config.json,
 * tokenizer_config.json and rehearsal_config.json of the trainer's random test model, mutated as
 * JSON (sizes, ids, templates, options replaced, deleted, wrapped, hostile values) and as text, then
 * loaded as the policy host loads them (the real ONNX graph and tokenizer) and asked for four
 * tokens. The promise: the folder is refused with a coded error before any token, or it loads and
 * generates within a bound; never an uncoded exception, never a hang or runaway memory.
 */

const FILES = [
  'config.json',
  'generation_config.json',
  'tokenizer_config.json',
  'rehearsal_config.json',
] as const;
const REHEARSAL_CONFIG: JsonValue = {
  identifierSlots: false,
  rehearsePrompt: { profile: 'compact', maxHistoryBytes: 1200 },
};
/** Most milliseconds one load and four tokens may take. */
const LIMIT_MS = 30_000;

let model = '';
const originals = new Map<string, string>();

/** The model folder target (see the file's comment). */
export const modelFolderTarget: FuzzTarget = {
  name: 'model folder configs (real ONNX graph and tokenizer, in-process)',
  startsProcesses: true,
  share: 0.1,
  async setup(scratch: string) {
    model = path.join(scratch, 'fuzz-model');
    await fs.rm(model, { recursive: true, force: true });
    await fs.cp(await randomTestModel(), model, { recursive: true });
    await fs.writeFile(path.join(model, 'rehearsal_config.json'), JSON.stringify(REHEARSAL_CONFIG));
    for (const f of FILES) originals.set(f, await fs.readFile(path.join(model, f), 'utf8'));
  },
  property() {
    const values = (f: string) => [JSON.parse(originals.get(f)!) as JsonValue];
    const edit = fc.constantFrom(...FILES).chain((file) =>
      fc
        .oneof(
          {
            weight: 3,
            arbitrary: mutatedJson(values(file), 3).map((v) => {
              try {
                return JSON.stringify(v) ?? '';
              } catch {
                return '[[';
              }
            }),
          },
          { weight: 1, arbitrary: mutatedText(originals.get(file)!, 2) },
          { weight: 1, arbitrary: fc.constant('') },
        )
        .map((text) => ({ file, text })),
    );
    return fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 2 }), async (edits) => {
      for (const f of FILES) await fs.writeFile(path.join(model, f), originals.get(f)!);
      for (const e of edits) await fs.writeFile(path.join(model, e.file), e.text);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `no outcome within ${LIMIT_MS} ms for ${JSON.stringify(edits).slice(0, 500)}`,
              ),
            ),
          LIMIT_MS,
        );
      });
      try {
        const outcome = await Promise.race([
          deadline,
          codedOrNothing(async () => {
            await readPolicySettings(model);
            const engine = await OnnxEngine.load(model, 'cpu', 1);
            const prompt = engine.encode(
              engine.renderChat([{ role: 'user', content: 'Find order #W1.' }], []),
            );
            const result = await engine.generate({
              promptIds: prompt,
              n: 1,
              maxTokens: 4,
              sampling: GREEDY,
            });
            assert.equal(result.samples.length, 1);
            assert.ok(result.samples[0].ids.length <= 4);
            return result;
          }),
        ]);
        void outcome;
      } finally {
        clearTimeout(timer);
      }
    });
  },
};
