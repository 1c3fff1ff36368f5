/**
 * The memory plan of a training run: bytes per GPU for weights, adapter, gradients, optimizer
 * states and activations, from the base model's shape and the run's settings. Pure arithmetic,
 * no I/O; every formula is written here once, and docs/training.md ("Will it fit?") summarises it.
 *
 * It is an estimate, not a measurement. What it leaves out, plainly: biases, the CUDA context past
 * the fixed reserve below, the allocator's fragmentation, LoRA dropout's copies of the inputs
 * (the plan assumes dropout 0), MoE shared experts and dense-only layers, and attention's
 * O(tokens²) scores (the plan assumes a fused attention kernel, as PyTorch's SDPA picks in bf16).
 */

/** The sizes of a Hugging Face decoder that the plan needs (config.json's names in the comments). */
export interface ModelShape {
  /** hidden_size */
  hiddenSize: number;
  /** intermediate_size (the dense MLP's width) */
  intermediateSize: number;
  /** num_hidden_layers */
  layers: number;
  /** num_attention_heads */
  heads: number;
  /** num_key_value_heads (default: num_attention_heads) */
  keyValueHeads: number;
  /** head_dim (default: hidden_size / num_attention_heads) */
  headDim: number;
  /** vocab_size */
  vocabSize: number;
  /** tie_word_embeddings: the output layer shares the embedding matrix */
  tiedEmbeddings: boolean;
  /** MoE only: num_experts or num_local_experts, moe_intermediate_size, num_experts_per_tok. */
  experts?: { count: number; intermediateSize: number; perToken: number };
}

/** How the run trains: full fine-tuning, or LoRA adapters on a frozen base (the run's `lora.rank`). */
export type TrainingMode =
  { kind: 'full' } | { kind: 'lora'; rank: number; targetModules: readonly string[] };

/** What a plan is made for. */
export interface MemorySettings {
  mode: TrainingMode;
  /** Gradient checkpointing per decoder layer (recompute a layer's activations in the backward). */
  checkpointing: boolean;
  /** Rows per forward pass on one GPU (`train.micro_batch_size`). */
  microBatch: number;
  /** Tokens of the longest row (`data.max_length`). */
  sequenceLength: number;
  /** GPUs the weights and states are sharded across (FSDP / ZeRO-3). */
  gpus: number;
  /** Memory of one GPU, in GiB. */
  gpuMemoryGiB: number;
}

/** Bytes per GPU, each part of the plan. */
export interface MemoryParts {
  weights: number;
  adapter: number;
  gradients: number;
  optimizer: number;
  activations: number;
  logits: number;
  reserve: number;
}

/** A plan: the model's sizes, what is trained, and bytes per GPU against the GPU's memory. */
export interface MemoryPlan {
  settings: MemorySettings;
  /** Every parameter of the base model. */
  parameters: number;
  /** Parameters the optimizer updates (all, or the adapter's). */
  trainableParameters: number;
  perGpu: MemoryParts;
  /** The sum of `perGpu`. */
  totalPerGpu: number;
  /** `gpuMemoryGiB` in bytes. */
  capacity: number;
  fits: boolean;
}

/** The linear layers LoRA adapts by default: every projection of attention and the MLP. */
export const DEFAULT_LORA_TARGETS = [
  'q_proj',
  'k_proj',
  'v_proj',
  'o_proj',
  'gate_proj',
  'up_proj',
  'down_proj',
] as const;

export const GIB = 2 ** 30;

/** bf16: 2 bytes a value (frozen LoRA base, activations). */
const BF16 = 2;
/**
 * Full fine-tuning as the trainer does it today (train.precision fp32 or bf16 autocast): fp32
 * parameters (4 B) + fp32 gradients (4 B) + AdamW's two fp32 moments (8 B) = 16 B a parameter.
 * Autocast's transient bf16 copies of a layer's weights are not counted.
 */
const FULL_WEIGHT_BYTES = 4;
const FP32_GRADIENT_BYTES = 4;
const ADAMW_STATE_BYTES = 8;
/**
 * The loss's logits: fp32 logits (4 B) and fp32 log-softmax kept for the backward (4 B) per token
 * per vocabulary entry; the bf16 output of the output layer and the logits' gradient come and go
 * around them.
 */
const LOGITS_BYTES_PER_ENTRY = 8;
/** Fixed per GPU: the CUDA context, cuBLAS workspaces and the allocator's slack. */
const RESERVE_BYTES = 1 * GIB;

/** The in and out widths of each linear layer of one decoder layer (per expert for an MoE MLP). */
function linearLayers(
  shape: ModelShape,
): Record<string, { in: number; out: number; copies: number }> {
  const h = shape.hiddenSize;
  const q = shape.heads * shape.headDim;
  const kv = shape.keyValueHeads * shape.headDim;
  const mlp = shape.experts?.intermediateSize ?? shape.intermediateSize;
  const experts = shape.experts?.count ?? 1;
  return {
    q_proj: { in: h, out: q, copies: 1 },
    k_proj: { in: h, out: kv, copies: 1 },
    v_proj: { in: h, out: kv, copies: 1 },
    o_proj: { in: q, out: h, copies: 1 },
    gate_proj: { in: h, out: mlp, copies: experts },
    up_proj: { in: h, out: mlp, copies: experts },
    down_proj: { in: mlp, out: h, copies: experts },
  };
}

/**
 * Parameters of the model: embeddings V·h, the output layer V·h unless tied, per layer the
 * linear layers (attention q, k, v, o; MLP gate, up, down, times the experts of an MoE) plus an
 * MoE router h·E and two RMSNorms 2h, and the final norm h. Biases are left out.
 */
export function parameterCount(shape: ModelShape): number {
  const h = shape.hiddenSize;
  const embeddings = shape.vocabSize * h * (shape.tiedEmbeddings ? 1 : 2);
  let perLayer = 2 * h + (shape.experts ? h * shape.experts.count : 0);
  for (const l of Object.values(linearLayers(shape))) perLayer += l.in * l.out * l.copies;
  return embeddings + shape.layers * perLayer + h;
}

/** LoRA's parameters: r·(in + out) for each target linear layer of each layer (and expert). */
export function loraParameterCount(
  shape: ModelShape,
  rank: number,
  targets: readonly string[],
): number {
  const layers = linearLayers(shape);
  let perLayer = 0;
  for (const name of new Set(targets)) {
    const l = layers[name];
    if (l) perLayer += rank * (l.in + l.out) * l.copies;
  }
  return shape.layers * perLayer;
}

/**
 * bf16 values one decoder layer keeps per token for its backward: attention's two RMSNorm
 * in/out (2h), q and the attention output (2·heads·head_dim), k and v (2·kv_heads·head_dim);
 * the MLP's norm in/out (2h) and gate, up, SiLU(gate) and their product (4·I, for each of the
 * k experts a token goes to in an MoE, plus the router's E logits).
 */
export function activationValuesPerToken(shape: ModelShape): number {
  const h = shape.hiddenSize;
  const attention =
    2 * h + 2 * shape.heads * shape.headDim + 2 * shape.keyValueHeads * shape.headDim;
  const mlp = shape.experts
    ? 2 * h + 4 * shape.experts.intermediateSize * shape.experts.perToken + shape.experts.count
    : 2 * h + 4 * shape.intermediateSize;
  return attention + mlp;
}

/**
 * Activations of one micro-batch (T = micro-batch × longest row tokens), bf16:
 * - without checkpointing, every layer keeps all: layers × T × values per token × 2 B;
 * - with checkpointing, every layer keeps only its input (layers × T × h × 2 B), and the one layer
 *   being recomputed in the backward holds all of its own (T × values per token × 2 B).
 */
export function activationBytes(shape: ModelShape, settings: MemorySettings): number {
  const tokens = settings.microBatch * settings.sequenceLength;
  const layerAll = tokens * activationValuesPerToken(shape) * BF16;
  if (!settings.checkpointing) return shape.layers * layerAll;
  return shape.layers * tokens * shape.hiddenSize * BF16 + layerAll;
}

/**
 * The plan. Weights and states are divided by the GPUs (sharded, FSDP / ZeRO-3); activations and
 * logits are each GPU's own micro-batch.
 * - full: weights 4 B, gradients 4 B, optimizer 8 B per parameter;
 * - LoRA: the frozen base 2 B per parameter (bf16), the adapter 4 B, its gradients 4 B and its
 *   optimizer 8 B per adapter parameter.
 */
export function planMemory(shape: ModelShape, settings: MemorySettings): MemoryPlan {
  const parameters = parameterCount(shape);
  const lora = settings.mode.kind === 'lora';
  const trainable =
    settings.mode.kind === 'lora'
      ? loraParameterCount(shape, settings.mode.rank, settings.mode.targetModules)
      : parameters;
  const shard = (bytes: number) => bytes / settings.gpus;
  const perGpu: MemoryParts = {
    weights: shard(parameters * (lora ? BF16 : FULL_WEIGHT_BYTES)),
    adapter: shard(lora ? trainable * FULL_WEIGHT_BYTES : 0),
    gradients: shard(trainable * FP32_GRADIENT_BYTES),
    optimizer: shard(trainable * ADAMW_STATE_BYTES),
    activations: activationBytes(shape, settings),
    logits:
      settings.microBatch * settings.sequenceLength * shape.vocabSize * LOGITS_BYTES_PER_ENTRY,
    reserve: RESERVE_BYTES,
  };
  const totalPerGpu = Object.values(perGpu).reduce((a, b) => a + b, 0);
  const capacity = settings.gpuMemoryGiB * GIB;
  return {
    settings,
    parameters,
    trainableParameters: trainable,
    perGpu,
    totalPerGpu,
    capacity,
    fits: totalPerGpu <= capacity,
  };
}

/** The fewest GPUs (up to `max`) on which `settings` fits, sharding weights and states; undefined: none. */
export function gpusToFit(
  shape: ModelShape,
  settings: MemorySettings,
  max = 1024,
): number | undefined {
  for (let gpus = settings.gpus; gpus <= max; gpus *= 2) {
    if (planMemory(shape, { ...settings, gpus }).fits) {
      // Halve back to the smallest count that fits (plans shrink as GPUs grow).
      let low = Math.max(settings.gpus, Math.floor(gpus / 2));
      while (low < gpus && !planMemory(shape, { ...settings, gpus: low }).fits) low++;
      return low;
    }
  }
  return undefined;
}
