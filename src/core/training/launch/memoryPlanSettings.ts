import { StudioError, errorMessage } from '../../base/errors';
import { requireNumber } from '../../base/numbers';
import { OUTSIDE_NUMBERS } from '../../base/outsideNumbers';
import { readBaseModelShape } from './baseModelShape';
import type { MemoryPlan, MemorySettings, ModelShape } from './memoryPlan';
import { DEFAULT_LORA_TARGETS, planMemory } from './memoryPlan';
import type { RunSpec } from './runSpec';
import { memoryPlanLines, refuseUnlessFits } from './memoryPlanFit';

/** The `--plan-*` options of `rehearse train --dry-run`. */
export interface MemoryPlanArgs {
  planGpus?: string;
  planGpuMemory?: string;
  planLoraR?: string;
  planLoraModules?: string;
  planCheckpointing?: boolean;
  planSeqLen?: string;
  planMicroBatch?: string;
}

/** The trainer's defaults of `data.max_length` and `train.micro_batch_size` (docs/trainer-config.md). */
const TRAINER_MAX_LENGTH = 2048;
const TRAINER_MICRO_BATCH = 4;

/** Whether any `--plan-*` option was given (they mean something only with `--dry-run`). */
export function hasPlanOptions(args: MemoryPlanArgs): boolean {
  return [
    args.planGpus,
    args.planGpuMemory,
    args.planLoraR,
    args.planLoraModules,
    args.planCheckpointing,
    args.planSeqLen,
    args.planMicroBatch,
  ].some((v) => v !== undefined);
}

/** A number of the run's hyperparameters (already checked by the run file's schema), or `fallback`. */
function hyper(spec: RunSpec, section: string, key: string, fallback: number): number {
  const v = spec.hyperparameters?.[section]?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

/** The plan's settings: the flags, else the run file's hyperparameters, else the trainer's defaults. */
export function memorySettings(spec: RunSpec, args: MemoryPlanArgs): MemorySettings {
  const flag = (
    value: string | undefined,
    spec_: (typeof OUTSIDE_NUMBERS)[keyof typeof OUTSIDE_NUMBERS],
    fallback: number,
  ) => requireNumber(value, spec_, fallback, { text: true });
  const modules = args.planLoraModules
    ?.split(',')
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
  if (modules !== undefined && args.planLoraR === undefined)
    throw new StudioError('USAGE', '--plan-lora-modules needs --plan-lora-r <rank>.');
  const unknown = modules?.filter((m) => !(DEFAULT_LORA_TARGETS as readonly string[]).includes(m));
  if (unknown && unknown.length > 0)
    throw new StudioError(
      'USAGE',
      `--plan-lora-modules: the plan knows ${DEFAULT_LORA_TARGETS.join(', ')}, not ${unknown.join(', ')}.`,
    );
  // The run file's own LoRA and checkpointing unless a flag plans something else.
  const runRank = hyper(spec, 'lora', 'rank', 0);
  const runModules = spec.hyperparameters?.['lora']?.['target_modules'];
  const known = (DEFAULT_LORA_TARGETS as readonly string[]).filter(
    (m) => !Array.isArray(runModules) || runModules.includes(m),
  );
  const rank =
    args.planLoraR !== undefined
      ? flag(args.planLoraR, OUTSIDE_NUMBERS.flagPlanLoraRank, 0)
      : runRank;
  return {
    mode:
      rank <= 0
        ? { kind: 'full' }
        : {
            kind: 'lora',
            rank,
            targetModules:
              modules && modules.length > 0
                ? modules
                : known.length > 0
                  ? known
                  : DEFAULT_LORA_TARGETS,
          },
    checkpointing:
      args.planCheckpointing === true ||
      spec.hyperparameters?.['train']?.['gradient_checkpointing'] === true,
    microBatch: flag(
      args.planMicroBatch,
      OUTSIDE_NUMBERS.flagPlanMicroBatch,
      hyper(spec, 'train', 'micro_batch_size', TRAINER_MICRO_BATCH),
    ),
    sequenceLength: flag(
      args.planSeqLen,
      OUTSIDE_NUMBERS.flagPlanSeqLen,
      hyper(spec, 'data', 'max_length', TRAINER_MAX_LENGTH),
    ),
    gpus: flag(args.planGpus, OUTSIDE_NUMBERS.flagPlanGpus, 1),
    gpuMemoryGiB: flag(args.planGpuMemory, OUTSIDE_NUMBERS.flagPlanGpuMemory, 80),
  };
}

/** The run's memory plan: its base model's config.json and {@link memorySettings}. */
export async function runMemoryPlan(
  spec: RunSpec,
  args: MemoryPlanArgs,
): Promise<{ shape: ModelShape; plan: MemoryPlan }> {
  const settings = memorySettings(spec, args);
  const shape = await readBaseModelShape(spec.base);
  return { shape, plan: planMemory(shape, settings) };
}

/**
 * The run's memory plan as lines a person reads (its settings from the run file), or one line saying
 * why its base's config.json gives none: what the editor's Start Training Run shows before it starts.
 */
export async function memoryPlanText(spec: RunSpec): Promise<string[]> {
  try {
    const { shape, plan } = await runMemoryPlan(spec, {});
    const lines = memoryPlanLines(plan);
    try {
      refuseUnlessFits(shape, plan);
    } catch (refused) {
      lines.push(errorMessage(refused));
    }
    return lines;
  } catch (err) {
    if (!(err instanceof StudioError)) throw err;
    return [`memory plan: none (${err.code}: ${err.message})`];
  }
}
