import { StudioError } from '../../base/errors';
import { formatParameters } from '../../base/counted';
import type { MemoryPlan, MemorySettings, ModelShape } from './memoryPlan';
import { DEFAULT_LORA_TARGETS, GIB, gpusToFit, planMemory } from './memoryPlan';

/** Bytes as GiB with one decimal: `31.4 GiB`. */
export function gib(bytes: number): string {
  return `${(bytes / GIB).toFixed(1)} GiB`;
}

/** The rank the fixes propose for LoRA. */
const SUGGESTED_LORA_RANK = 16;

/** One change that would make a plan fit, as the flag that asks for it and the plan it gives. */
interface Fix {
  text: string;
  plan: MemoryPlan;
}

/** The changes, one at a time and then together, that make the plan fit; the fitting ones only. */
function fixes(shape: ModelShape, settings: MemorySettings): string[] {
  const tries: Fix[] = [];
  const lora: MemorySettings['mode'] = {
    kind: 'lora',
    rank: SUGGESTED_LORA_RANK,
    targetModules: DEFAULT_LORA_TARGETS,
  };
  if (settings.mode.kind === 'full')
    tries.push({
      text: `LoRA (--plan-lora-r ${SUGGESTED_LORA_RANK})`,
      plan: planMemory(shape, { ...settings, mode: lora }),
    });
  if (!settings.checkpointing)
    tries.push({
      text: 'gradient checkpointing (--plan-checkpointing)',
      plan: planMemory(shape, { ...settings, checkpointing: true }),
    });
  if (settings.mode.kind === 'full' && !settings.checkpointing)
    tries.push({
      text: `LoRA with gradient checkpointing (--plan-lora-r ${SUGGESTED_LORA_RANK} --plan-checkpointing)`,
      plan: planMemory(shape, { ...settings, mode: lora, checkpointing: true }),
    });
  if (settings.microBatch > 1)
    tries.push({
      text: 'a micro-batch of 1 (--plan-micro-batch 1; train.micro_batch_size)',
      plan: planMemory(shape, { ...settings, microBatch: 1 }),
    });
  const found = tries
    .filter((t) => t.plan.fits)
    .map((t) => `${t.text}: ${gib(t.plan.totalPerGpu)}`);
  const gpus = gpusToFit(shape, settings);
  if (gpus !== undefined)
    found.push(`${gpus} GPUs, weights and states sharded (--plan-gpus ${gpus})`);
  return found;
}

/**
 * Throws `MEMORY_PLAN_DOES_NOT_FIT` unless `plan` fits its GPUs; the message gives the plan's
 * total, the GPU's memory, and each change that would fit with its own total.
 */
export function refuseUnlessFits(shape: ModelShape, plan: MemoryPlan): void {
  if (plan.fits) return;
  const { settings } = plan;
  const found = fixes(shape, settings);
  const mode = settings.mode.kind === 'full' ? 'full fine-tuning' : `LoRA r${settings.mode.rank}`;
  throw new StudioError(
    'MEMORY_PLAN_DOES_NOT_FIT',
    `The memory plan does not fit: ${mode} plans ${gib(plan.totalPerGpu)} per GPU, and a GPU has ${gib(plan.capacity)} (${settings.gpus} GPU${settings.gpus === 1 ? '' : 's'}). ` +
      (found.length > 0
        ? `What would fit: ${found.join('; ')}.`
        : 'Nothing of LoRA, gradient checkpointing or more GPUs fits alone: shorten the rows (data.max_length) or use GPUs with more memory.'),
    { plannedBytes: plan.totalPerGpu, capacityBytes: plan.capacity },
  );
}

/** The plan as lines a person reads: the settings, each part per GPU, the total and whether it fits. */
export function memoryPlanLines(plan: MemoryPlan): string[] {
  const { settings, perGpu } = plan;
  const mode =
    settings.mode.kind === 'full'
      ? 'full fine-tuning (fp32 weights, AdamW fp32 states)'
      : `LoRA r${settings.mode.rank} over ${settings.mode.targetModules.join(', ')} (bf16 frozen base)`;
  return [
    `memory plan per GPU: ${mode}`,
    `  ${formatParameters(plan.parameters)} parameters, ${formatParameters(plan.trainableParameters)} trained; ` +
      `micro-batch ${settings.microBatch} × ${settings.sequenceLength} tokens; ` +
      `checkpointing ${settings.checkpointing ? 'on' : 'off'}; ${settings.gpus} GPU${settings.gpus === 1 ? '' : 's'} of ${settings.gpuMemoryGiB} GiB` +
      (settings.gpus > 1
        ? " (weights and states sharded: FSDP / ZeRO-3; the trainer's DDP today keeps a whole copy on each)"
        : ''),
    `  weights      ${gib(perGpu.weights)}`,
    `  adapter      ${gib(perGpu.adapter)}`,
    `  gradients    ${gib(perGpu.gradients)}`,
    `  optimizer    ${gib(perGpu.optimizer)}`,
    `  activations  ${gib(perGpu.activations)}`,
    `  logits       ${gib(perGpu.logits)}`,
    `  reserve      ${gib(perGpu.reserve)}`,
    `  total        ${gib(plan.totalPerGpu)} of ${gib(plan.capacity)}: ${plan.fits ? 'fits' : 'does not fit'}`,
  ];
}
