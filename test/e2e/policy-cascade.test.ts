// The cascade graph (onnx/model_cascade.onnx): n samples decoded over one shared copy of the prompt's
// cache must compute what the plain graph computes with a copy per sample, in onnxruntime itself and
// through the policy host's decode loop; a folder without the graph still loads and decodes.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { GenerateRequest } from '../../src/core/policy/onnx/decoder';
import { OnnxDecoder, forwardInputs } from '../../src/core/policy/onnx/decoder';
import type { PastTensors } from '../../src/core/policy/onnx/kvCache';
import {
  emptyPast,
  pastAsPrefix,
  presentsAsPast,
  tilePast,
} from '../../src/core/policy/onnx/kvCache';
import type { ModelFolderInfo } from '../../src/core/policy/onnx/modelFolder';
import { readModelFolder } from '../../src/core/policy/onnx/modelFolder';
import { GREEDY } from '../../src/core/policy/sampling/sampling';
import { randomTestModel } from '../support/testModels';
import { rejects } from '../support/errors';

/** A prompt of `length` token ids spread over the vocabulary (a random model needs no meaning). */
const promptOf = (length: number, vocab: number) =>
  Array.from({ length }, (_, i) => (i * 37 + 11) % vocab);

describe("policy host: the cascade graph shares the prompt's cache between samples", function () {
  this.timeout(120_000);
  let info: ModelFolderInfo;

  before(async function () {
    this.timeout(300_000);
    info = await readModelFolder(await randomTestModel(1));
  });

  it("onnxruntime: cascade logits equal the plain graph's for 3 samples with different tokens (within 1e-4)", async () => {
    assert.equal(info.cascadeFile, 'onnx/model_cascade.onnx');
    const options = { executionProviders: ['cpu'], logSeverityLevel: 3 as const };
    const plain = await ort.InferenceSession.create(path.join(info.dir, info.onnxFile), options);
    const cascade = await ort.InferenceSession.create(
      path.join(info.dir, info.cascadeFile!),
      options,
    );
    try {
      const { numLayers: layers, numKeyValueHeads: heads, headDim, vocabSize: vocab } = info;
      const prompt = promptOf(150, vocab);
      const prefill = await plain.run(
        forwardInputs(prompt, 0, 1, emptyPast(layers, heads, headDim, 1), { positionIds: true }),
      );
      const n = 3;
      const prefix = pastAsPrefix(presentsAsPast(prefill, layers));
      let tiled: PastTensors = await tilePast(presentsAsPast(prefill, layers), n);
      let own: PastTensors = emptyPast(layers, heads, headDim, n);
      let length = prompt.length;
      let worst = 0;
      // Two tokens at once first (causal within the chunk), then one at a time.
      for (const seq of [2, 1, 1, 1, 1]) {
        const tokens = Array.from(
          { length: n * seq },
          (_, i) => (length * 13 + i * 101 + 5) % vocab,
        );
        const expected = await plain.run(
          forwardInputs(tokens, length, n, tiled, { positionIds: true }),
        );
        const actual = await cascade.run(
          forwardInputs(tokens, length, n, own, { positionIds: true, prefix }),
        );
        const a = actual['logits'].data as Float32Array;
        const e = expected['logits'].data as Float32Array;
        assert.equal(a.length, e.length);
        for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - e[i]));
        length += seq;
        tiled = presentsAsPast(expected, layers);
        own = presentsAsPast(actual, layers);
      }
      assert.ok(worst < 1e-4, `max |logit difference| ${worst}`);
      assert.deepEqual(
        own['past_key_values.0.key'].dims,
        [n, heads, length - prompt.length, headDim],
        "present holds the samples' own tokens only",
      );
    } finally {
      await plain.release();
      await cascade.release();
    }
  });

  describe('the decode loop', () => {
    let withCascade: OnnxDecoder;
    let withoutCascade: OnnxDecoder;
    let prompt: number[];
    const generate = (decoder: OnnxDecoder, request: Partial<GenerateRequest>) =>
      decoder.generate({
        promptIds: prompt,
        n: 1,
        maxTokens: 20,
        minTokens: 20,
        sampling: GREEDY,
        ...request,
      });
    const ids = async (decoder: OnnxDecoder, request: Partial<GenerateRequest>) =>
      (await generate(decoder, request)).samples.map((s) => s.ids);

    before(async () => {
      prompt = promptOf(300, info.vocabSize);
      // The main graph's decode loop (the cascade graph is not read where the slots graph decodes).
      withCascade = await OnnxDecoder.load(info, 'cpu', undefined, { kvCache: 'copy' });
      withoutCascade = await OnnxDecoder.load(
        { ...info, cascadeFile: undefined },
        'cpu',
        undefined,
        {
          kvCache: 'copy',
        },
      );
    });
    after(async () => {
      await withCascade?.dispose();
      await withoutCascade?.dispose();
    });

    it('greedy: each of 3 batched samples is the single-sample decode of the plain graph, token for token', async () => {
      const [single] = await ids(withoutCascade, { n: 1 });
      const batched = await generate(withCascade, { n: 3 });
      assert.equal(batched.sharedPrefix, true);
      assert.deepEqual(
        batched.samples.map((s) => s.ids),
        [single, single, single],
      );
      assert.equal(
        (await generate(withCascade, { n: 1 })).sharedPrefix,
        false,
        'one sample decodes with the plain graph',
      );
      assert.equal((await generate(withoutCascade, { n: 3 })).sharedPrefix, false);
    });

    // That the samples differ from one another is a property of the sampler, not of these random
    // weights: test/unit/policy-sampling.test.ts asserts it on fixed logits.
    it('sampled: 4 samples, the same tokens with and without the cascade graph', async () => {
      const request = { n: 4, sampling: { ...GREEDY, temperature: 1.5, seed: 5 } };
      const cascaded = await ids(withCascade, request);
      assert.deepEqual(
        cascaded.map((s) => s.length),
        [20, 20, 20, 20],
      );
      assert.deepEqual(cascaded, await ids(withoutCascade, request));
    });

    it("keeps the prompt's cache as the session: the next call with n samples reuses it", async () => {
      await generate(withCascade, { n: 3, session: 'cascade' });
      const next = await generate(withCascade, {
        n: 3,
        session: 'cascade',
        promptIds: prompt.concat([7, 8, 9]),
      });
      assert.equal(next.reused, prompt.length);
      assert.deepEqual(
        next.samples.map((s) => s.ids),
        await ids(withoutCascade, { n: 3, promptIds: prompt.concat([7, 8, 9]) }),
      );
      withCascade.endSession('cascade');
    });
  });

  it('a folder without model_cascade.onnx loads and decodes n samples (an export with export.cascade = false, or an older one); a broken one is named', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'no-cascade-'));
    try {
      await fs.cp(info.dir, dir, { recursive: true });
      await fs.writeFile(path.join(dir, 'onnx', 'model_cascade.onnx'), Buffer.alloc(4096, 7));
      const broken = await rejects(
        OnnxDecoder.load(await readModelFolder(dir), 'cpu', undefined, { kvCache: 'copy' }),
      );
      assert.equal(broken.code, 'MODEL_FILE_BROKEN');
      assert.match(
        broken.message,
        /onnx[/\\]model_cascade\.onnx cannot be loaded/,
        'a broken cascade graph is named, not skipped',
      );
      await fs.rm(path.join(dir, 'onnx', 'model_cascade.onnx'));
      const plain = await readModelFolder(dir);
      assert.equal(plain.cascadeFile, undefined);
      const decoder = await OnnxDecoder.load(plain, 'cpu', undefined, { kvCache: 'copy' });
      try {
        const result = await decoder.generate({
          promptIds: promptOf(40, plain.vocabSize),
          n: 2,
          maxTokens: 4,
          minTokens: 4,
          sampling: GREEDY,
        });
        assert.deepEqual(
          result.samples.map((s) => s.ids.length),
          [4, 4],
        );
        assert.equal(result.sharedPrefix, false);
      } finally {
        await decoder.dispose();
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
