import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import { trainerInvocation } from '../../core/training/launch/backends';
import type { LaunchPlan } from '../../core/training/launch/launchPlan';
import { formatCommand } from '../../core/training/launch/launchPlan';
import type { TrainerEvent } from '../../core/training/launch/supervisor';
import { TrainingProcess } from '../../core/training/launch/supervisor';
import type { CliIO } from '../io';
import { EXIT } from '../io';
import { outFolderArg } from '../outArg';

/** Options of `rehearse import checkpoint` and `rehearse export checkpoint`. */
export interface CheckpointArgs {
  out?: string;
  dtype?: string;
  maxShardBytes?: string;
  verbose?: boolean;
  /** The trainer's Python (default: the studio's environment). */
  python?: string;
}

/** The trainer command of each direction, and what its `--out` holds (for messages). */
const DIRECTIONS = {
  import: {
    command: 'import-checkpoint',
    holds: 'the policy folder: weights, tokenizer, chat template and onnx/',
  },
  export: {
    command: 'export-checkpoint',
    holds: 'the Hugging Face folder: config.json, safetensors, tokenizer files',
  },
} as const;

/** Trainer error codes that mean the folder given is wrong (exit 2), not a failure while running. */
const INPUT_ERRORS = new Set([
  'MODEL_MISSING',
  'MODEL_UNSUPPORTED',
  'MODEL_CONFIG_INVALID',
  'WEIGHTS_INVALID',
  'WEIGHTS_MISMATCH',
  'MODEL_IS_ADAPTER',
  'TOKENIZER_MISSING',
  'USAGE',
  'CONFIG_INVALID',
]);

function sourceFolder(source: string, direction: keyof typeof DIRECTIONS): string {
  let isFolder = false;
  try {
    isFolder = statSync(source).isDirectory();
  } catch {
    /* reported below */
  }
  if (!isFolder) {
    const what =
      direction === 'import'
        ? "a Hugging Face folder (EnvACE's scripts/model_merger.py --target_dir)"
        : "a policy folder, a training run's final/ or one of its checkpoints";
    throw new StudioError('USAGE', `${source} is not a folder; pass ${what}.`);
  }
  // A LoRA adapter folder (adapter_config.json) goes to the trainer: export merges it onto its base,
  // import says to take the merged folder instead (MODEL_IS_ADAPTER).
  const adapter = existsSync(path.join(source, 'adapter_config.json'));
  if (!adapter && !existsSync(path.join(source, 'config.json'))) {
    throw new StudioError(
      'USAGE',
      direction === 'import'
        ? `${source} is not a Hugging Face folder (no config.json); pass the folder EnvACE's scripts/model_merger.py wrote, not the FSDP checkpoint.`
        : `${source} has no config.json; pass a policy folder (from \`rehearse import checkpoint\`), a training run's final/ or a checkpoint.`,
    );
  }
  return path.resolve(source);
}

/** The trainer's argv for one direction, as a plan the training supervisor runs (one local process). */
function checkpointPlan(
  direction: keyof typeof DIRECTIONS,
  source: string,
  out: string,
  args: CheckpointArgs,
): LaunchPlan {
  const { python, root, env } = trainerInvocation({ python: args.python });
  const argv = [
    python,
    '-m',
    'trainer',
    DIRECTIONS[direction].command,
    '--source',
    source,
    '--out',
    out,
  ];
  if (direction === 'export' && args.dtype) argv.push('--dtype', args.dtype);
  if (direction === 'export' && args.maxShardBytes) {
    if (!/^[1-9]\d*$/.test(args.maxShardBytes))
      throw new StudioError(
        'USAGE',
        `--max-shard-bytes must be a whole number of bytes, not "${args.maxShardBytes}".`,
      );
    argv.push('--max-shard-bytes', args.maxShardBytes);
  }
  if (
    direction === 'export' &&
    args.dtype &&
    !['float32', 'float16', 'bfloat16'].includes(args.dtype)
  ) {
    throw new StudioError(
      'USAGE',
      `--dtype must be float32, float16 or bfloat16, not "${args.dtype}".`,
    );
  }
  return {
    backend: 'local',
    argv,
    env,
    cwd: root,
    outDir: out,
    runsHere: true,
  };
}

/** One progress line of a `progress` event: `read 2/3 model-00002-of-00003.safetensors`. */
function progressLine(e: TrainerEvent): string {
  if (e['stage'] === 'export')
    return 'export: tracing the ONNX graphs (model.onnx, model_cascade.onnx)';
  return `${String(e['stage'])}: ${String(e['done'])}/${String(e['total'])} ${String(e['file'] ?? '')}`.trimEnd();
}

/**
 * `rehearse import checkpoint <hf folder> --out <policy folder>` and `rehearse export checkpoint
 * <policy folder> --out <hf folder>`: the trainer converts between EnvACE's merged Hugging Face
 * checkpoints (qwen3, qwen2, llama; safetensors) and the studio's policy folders (ONNX), with a
 * progress line per stage and the trainer's coded error when the folder is wrong.
 */
export async function checkpointCommand(
  direction: keyof typeof DIRECTIONS,
  source: string,
  args: CheckpointArgs,
  io: CliIO,
): Promise<number> {
  if (!args.out)
    throw new StudioError('USAGE', `Missing --out <folder>: ${DIRECTIONS[direction].holds}.`);
  const out = path.resolve(outFolderArg(args.out, '--out', DIRECTIONS[direction].holds));
  const from = sourceFolder(source, direction);
  if (from === out)
    throw new StudioError(
      'USAGE',
      `--out ${args.out} is the folder being read; pass a new folder.`,
    );
  const plan = checkpointPlan(direction, from, out, args);
  if (args.verbose) io.err(`command: ${formatCommand(plan)}`);
  const proc = await TrainingProcess.start(plan);
  let written: TrainerEvent | undefined;
  proc.onEvent((e) => {
    if (e.event === 'progress') io.err(progressLine(e));
    if (e.event === 'export' || e.event === 'hf_folder') written = e;
  });
  if (args.verbose) proc.onLog((line) => io.err(`[trainer] ${line}`));
  const outcome = await proc.done;
  if (outcome.status !== 'done') {
    const code = outcome.error?.code ?? 'TRAINER_CRASHED';
    const tail =
      outcome.stderrTail && !INPUT_ERRORS.has(code)
        ? `\n--- trainer log (last lines) ---\n${outcome.stderrTail}`
        : '';
    io.err(`rehearse: ${outcome.error?.message ?? 'the trainer failed'} (${code})${tail}`);
    return INPUT_ERRORS.has(code) ? EXIT.usage : EXIT.failure;
  }
  io.out(
    direction === 'import'
      ? `imported ${String(written?.['parameters'] ?? '?')} parameters into ${out} (onnx/model.onnx, ${written?.['cascade_bytes'] ? 'onnx/model_cascade.onnx, ' : ''}${written?.['slots_bytes'] ? 'onnx/model_slots.onnx, ' : ''}tokenizer and chat template); run it with --policy ${out}`
      : `exported a ${String(written?.['model_type'])} Hugging Face folder to ${out} (${(written?.['files'] as string[] | undefined)?.join(', ') ?? ''}, ${String(written?.['dtype'])}); EnvACE starts from it with actor_rollout_ref.model.path=${out}`,
  );
  return EXIT.ok;
}
