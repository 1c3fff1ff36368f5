// The memory plan of `rehearse train --dry-run` (issue 42, part 6): the arithmetic on published
// model configs, the refusal and its fixes, monotonicity, and the CLI through the in-process CLI.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { StudioError } from '../../src/core/base/errors';
import { readBaseModelShape, shapeOfConfig } from '../../src/core/training/launch/baseModelShape';
import type { MemorySettings, ModelShape } from '../../src/core/training/launch/memoryPlan';
import {
  DEFAULT_LORA_TARGETS,
  parameterCount,
  planMemory,
} from '../../src/core/training/launch/memoryPlan';
import { refuseUnlessFits } from '../../src/core/training/launch/memoryPlanFit';
import { rehearse } from '../support/cli';

/** Qwen3-8B's published config.json (the sizes the plan reads). */
const QWEN3_8B = {
  architectures: ['Qwen3ForCausalLM'],
  hidden_size: 4096,
  intermediate_size: 12288,
  num_hidden_layers: 36,
  num_attention_heads: 32,
  num_key_value_heads: 8,
  head_dim: 128,
  vocab_size: 151936,
  tie_word_embeddings: false,
};

/** Qwen3-0.6B's published config.json. */
const QWEN3_0_6B = {
  hidden_size: 1024,
  intermediate_size: 3072,
  num_hidden_layers: 28,
  num_attention_heads: 16,
  num_key_value_heads: 8,
  head_dim: 128,
  vocab_size: 151936,
  tie_word_embeddings: true,
};

/** Qwen3-30B-A3B's published config.json (MoE: 128 experts, 8 per token). */
const QWEN3_30B_A3B = {
  hidden_size: 2048,
  intermediate_size: 6144,
  moe_intermediate_size: 768,
  num_hidden_layers: 48,
  num_attention_heads: 32,
  num_key_value_heads: 4,
  head_dim: 128,
  vocab_size: 151936,
  num_experts: 128,
  num_experts_per_tok: 8,
  tie_word_embeddings: false,
};

const LORA_R16: MemorySettings = {
  mode: { kind: 'lora', rank: 16, targetModules: DEFAULT_LORA_TARGETS },
  checkpointing: true,
  microBatch: 1,
  sequenceLength: 4096,
  gpus: 1,
  gpuMemoryGiB: 80,
};
const FULL: MemorySettings = { ...LORA_R16, mode: { kind: 'full' } };

function refusal(shape: ModelShape, settings: MemorySettings): StudioError {
  try {
    refuseUnlessFits(shape, planMemory(shape, settings));
  } catch (err) {
    assert.ok(err instanceof StudioError);
    return err;
  }
  assert.fail('the plan was not refused');
}

describe('memory plan (rehearse train --dry-run)', () => {
  const qwen8b = shapeOfConfig(QWEN3_8B);

  it('counts the published parameters of Qwen3-8B, Qwen3-0.6B and Qwen3-30B-A3B within 2%', () => {
    // Published: 8.19B, 0.60B (0.44B without embeddings, tied), 30.5B.
    const near = (n: number, published: number) =>
      assert.ok(Math.abs(n / published - 1) < 0.02, `${n} vs ${published}`);
    near(parameterCount(qwen8b), 8.19e9);
    near(parameterCount(shapeOfConfig(QWEN3_0_6B)), 0.6e9);
    near(parameterCount(shapeOfConfig(QWEN3_30B_A3B)), 30.5e9);
  });

  it('Qwen3-8B, LoRA r16, checkpointing, 4096-token rows: at most 40 GB on one 80 GiB GPU, fits', () => {
    const plan = planMemory(qwen8b, LORA_R16);
    assert.ok(plan.totalPerGpu <= 40e9, `${plan.totalPerGpu} bytes`);
    assert.ok(plan.fits);
    // The frozen base in bf16 is 2 bytes a parameter; the adapter is about 43.6M parameters.
    assert.equal(plan.perGpu.weights, plan.parameters * 2);
    assert.ok(Math.abs(plan.trainableParameters - 43_646_976) < 1);
    assert.doesNotThrow(() => refuseUnlessFits(qwen8b, plan));
  });

  it('Qwen3-8B full fine-tuning of the same does not fit, and the error names LoRA and more GPUs', () => {
    const plan = planMemory(qwen8b, FULL);
    assert.ok(!plan.fits);
    // 16 bytes a parameter (fp32 weights, gradients, AdamW's two moments) before activations.
    assert.equal(
      plan.perGpu.weights + plan.perGpu.gradients + plan.perGpu.optimizer,
      plan.parameters * 16,
    );
    const err = refusal(qwen8b, FULL);
    assert.equal(err.code, 'MEMORY_PLAN_DOES_NOT_FIT');
    assert.match(
      err.message,
      /full fine-tuning plans 1\d\d\.\d GiB per GPU, and a GPU has 80\.0 GiB/,
    );
    assert.match(err.message, /LoRA \(--plan-lora-r 16\)/);
    assert.match(err.message, /--plan-gpus 2/);
  });

  it('without checkpointing the refusal offers checkpointing too', () => {
    const settings: MemorySettings = { ...LORA_R16, checkpointing: false, microBatch: 4 };
    assert.ok(!planMemory(qwen8b, settings).fits);
    const err = refusal(qwen8b, settings);
    assert.match(err.message, /gradient checkpointing \(--plan-checkpointing\): \d+\.\d GiB/);
  });

  it('a Qwen3-0.6B-shaped model fits full fine-tuning on one 80 GiB GPU', () => {
    const plan = planMemory(shapeOfConfig(QWEN3_0_6B), { ...FULL, checkpointing: false });
    assert.ok(plan.fits, `${plan.totalPerGpu} bytes`);
  });

  it('more layers or longer rows never plan less (any shape, any settings)', () => {
    const shapes = fc.record({
      hiddenSize: fc.integer({ min: 1, max: 16_384 }),
      intermediateSize: fc.integer({ min: 1, max: 65_536 }),
      layers: fc.integer({ min: 1, max: 128 }),
      heads: fc.integer({ min: 1, max: 128 }),
      keyValueHeads: fc.integer({ min: 1, max: 128 }),
      headDim: fc.integer({ min: 1, max: 512 }),
      vocabSize: fc.integer({ min: 2, max: 300_000 }),
      tiedEmbeddings: fc.boolean(),
    });
    const settings = fc.record({
      mode: fc.oneof(
        fc.constant({ kind: 'full' as const }),
        fc.record({
          kind: fc.constant('lora' as const),
          rank: fc.integer({ min: 1, max: 256 }),
          targetModules: fc.subarray([...DEFAULT_LORA_TARGETS]),
        }),
      ),
      checkpointing: fc.boolean(),
      microBatch: fc.integer({ min: 1, max: 64 }),
      sequenceLength: fc.integer({ min: 1, max: 131_072 }),
      gpus: fc.integer({ min: 1, max: 64 }),
      gpuMemoryGiB: fc.constant(80),
    });
    fc.assert(
      fc.property(shapes, settings, fc.integer({ min: 1, max: 64 }), (shape, s, more) => {
        const base = planMemory(shape, s).totalPerGpu;
        const deeper = planMemory({ ...shape, layers: shape.layers + more }, s).totalPerGpu;
        const longer = planMemory(shape, {
          ...s,
          sequenceLength: s.sequenceLength + more,
        }).totalPerGpu;
        return deeper >= base && longer >= base;
      }),
    );
  });

  it('reads a config.json within its documented ranges: a size out of range is a coded error', () => {
    assert.throws(
      () => shapeOfConfig({ ...QWEN3_8B, num_hidden_layers: 1e9 }),
      (e: unknown) =>
        e instanceof StudioError &&
        e.code === 'MODEL_FOLDER_INCONSISTENT' &&
        /num_hidden_layers must be a whole number from 1 to 512/.test(e.message),
    );
    assert.throws(
      () => shapeOfConfig({}),
      (e: unknown) =>
        e instanceof StudioError &&
        e.code === 'MODEL_FOLDER_INCONSISTENT' &&
        /hidden_size must be a whole number from 1 to 1,048,576, not nothing/.test(e.message),
    );
    assert.throws(
      () => shapeOfConfig({ ...QWEN3_8B, hidden_size: '4096' }),
      (e: unknown) => e instanceof StudioError && e.code === 'MODEL_FOLDER_INCONSISTENT',
    );
    assert.throws(
      () => shapeOfConfig({ ...QWEN3_30B_A3B, num_experts_per_tok: 129 }),
      (e: unknown) => e instanceof StudioError && /num_experts_per_tok/.test(e.message),
    );
  });

  describe('the CLI', () => {
    let dir: string;
    let runFile: string;
    before(async () => {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-plan-'));
      await fs.mkdir(path.join(dir, 'qwen3-8b'));
      await fs.writeFile(path.join(dir, 'qwen3-8b', 'config.json'), JSON.stringify(QWEN3_8B));
      await fs.writeFile(path.join(dir, 'rows.jsonl'), '');
      runFile = await qwenRun('qwen.run.json', {
        data: { max_length: 4096 },
        train: { micro_batch_size: 1 },
      });
    });
    /** A run file of Qwen3-8B's config.json and an empty rows file, with these hyperparameters. */
    const qwenRun = async (name: string, hyperparameters: Record<string, unknown>) => {
      const file = path.join(dir, name);
      await fs.writeFile(
        file,
        JSON.stringify({
          objective: 'sft',
          base: 'qwen3-8b',
          data: { train: ['rows.jsonl'] },
          hyperparameters,
        }),
      );
      return file;
    };
    after(async () => {
      await fs.rm(dir, { recursive: true, force: true });
    });
    /** `rehearse train --config <config> --dry-run` with `extra` options. */
    const dryRun = (config: string, ...extra: string[]) =>
      rehearse('train', '--config', config, '--dry-run', '--python', process.execPath, ...extra);

    it('--dry-run with LoRA r16 and checkpointing prints the plan per GPU and exits 0', async () => {
      const r = await dryRun(runFile, '--plan-lora-r', '16', '--plan-checkpointing');
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /memory plan per GPU: LoRA r16 over q_proj/);
      assert.match(r.out, /micro-batch 1 × 4096 tokens; checkpointing on; 1 GPU of 80 GiB/);
      assert.match(r.out, /total {8}\d\d\.\d GiB of 80\.0 GiB: fits/);
    });

    it("plans the run file's own LoRA and checkpointing, and passes them to the trainer config", async () => {
      const loraRun = await qwenRun('qwen-lora.run.json', {
        model: { backend: 'transformers' },
        lora: { rank: 16, target_modules: ['q_proj', 'v_proj'] },
        data: { max_length: 4096 },
        train: { micro_batch_size: 1, gradient_checkpointing: true },
      });
      const r = await dryRun(loraRun);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /memory plan per GPU: LoRA r16 over q_proj, v_proj/);
      assert.match(r.out, /checkpointing on/);
      assert.match(r.out, /"lora": \{\s*"rank": 16/);
      assert.match(r.out, /"backend": "transformers"/);
      // A flag still plans something else without editing the file.
      const full = await dryRun(loraRun, '--plan-lora-r', '64');
      assert.match(full.out, /LoRA r64 over q_proj, v_proj/);
    });

    it('--dry-run of full fine-tuning prints the plan, then refuses it (exit 1) naming the fixes', async () => {
      const r = await dryRun(runFile);
      assert.equal(r.code, 1);
      assert.match(r.out, /total {8}1\d\d\.\d GiB of 80\.0 GiB: does not fit/);
      assert.match(r.err, /^rehearse: The memory plan does not fit: full fine-tuning plans /);
      assert.match(r.err, /--plan-lora-r 16 --plan-checkpointing/);
    });

    it("reads a multimodal base's text_config, and refuses a base config.json that is not an object", async () => {
      await fs.mkdir(path.join(dir, 'vl'));
      await fs.writeFile(
        path.join(dir, 'vl', 'config.json'),
        JSON.stringify({ model_type: 'qwen2_5_vl', text_config: QWEN3_0_6B }),
      );
      assert.deepEqual(await readBaseModelShape(path.join(dir, 'vl')), shapeOfConfig(QWEN3_0_6B));
      await fs.writeFile(path.join(dir, 'vl', 'config.json'), '[1]');
      await assert.rejects(
        readBaseModelShape(path.join(dir, 'vl')),
        (e: unknown) => e instanceof StudioError && e.code === 'MODEL_FILE_BROKEN',
      );
    });

    it('a base config.json without sizes: the dry run says why there is no plan, unless --plan-* asked for one', async () => {
      await fs.mkdir(path.join(dir, 'empty'));
      await fs.writeFile(path.join(dir, 'empty', 'config.json'), '{}');
      const emptyRun = path.join(dir, 'empty.run.json');
      await fs.writeFile(
        emptyRun,
        JSON.stringify({ objective: 'sft', base: 'empty', data: { train: ['rows.jsonl'] } }),
      );
      const r = await dryRun(emptyRun);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /memory plan: none \(MODEL_FOLDER_INCONSISTENT: .*hidden_size must be/);
      const asked = await dryRun(emptyRun, '--plan-checkpointing');
      assert.equal(asked.code, 1);
      assert.match(asked.err, /hidden_size must be/);
    });

    it('--plan-* options without --dry-run, or out of range, are usage errors (exit 2)', async () => {
      const without = await rehearse('train', '--config', runFile, '--plan-gpus', '2');
      assert.equal(without.code, 2);
      assert.match(without.err, /add --dry-run/);
      const zero = await dryRun(runFile, '--plan-gpus', '0');
      assert.equal(zero.code, 2);
      assert.match(zero.err, /--plan-gpus must be a whole number from 1 to 1,024, not "0"/);
    });
  });
});
