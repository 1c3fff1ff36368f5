import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../base/errors';
import { studioRoot } from '../../base/studioRoot';
import { resolveTrainerPython } from '../pythonEnv';
import { envaceLaunch } from './envace';
import type { LaunchPlan, TrainingBackend } from './launchPlan';
import type { RunSpec } from './runSpec';
import { invalidRunSpec, trainerConfigFaults, trainerConfigFor } from './runSpec';

/** The file name of the trainer config a launch writes into the run folder. */
export const GENERATED_CONFIG = 'trainer-config.json';

/** The file name of the trainer config an export after the run writes into the run folder. */
export const EXPORT_CONFIG = 'export-config.json';

/** What a launch may take besides the spec. */
export interface PlanOptions {
  /**
   * The trainer's Python (`--python`, the editor's setting); else the spec's hardware.python,
   * $TRAINER_PYTHON, the studio's environment (pythonEnv.ts).
   */
  python?: string;
  /** The studio's environment folder (default: pythonEnv's defaultEnvDir; the editor's own). */
  envDir?: string;
  /** torchrun on one node: the port to rendezvous on (default: the spec's, else picked by the caller). */
  masterPort?: number;
  /** The folder holding trainer/ (default: the studio's root). */
  trainerRoot?: string;
  /** Variables a caller adds to the trainer's environment (shown in the command like the others). */
  extraEnv?: Record<string, string>;
}

/**
 * The exact command of a run on a backend. `local` runs `python3 -m trainer <objective> --config
 * <run folder>/trainer-config.json` with PYTHONPATH at the studio root; `torchrun` starts N
 * processes per node through `python3 -m torch.distributed.run` (with `--redirects 1 --tee 1`, which
 * avoid its start-up crash on Python 3.11, pytorch#92319); `envace` generates EnvACE's own launch on
 * a Ray cluster; `trl` runs `python3 -m trainer trl-grpo` (TRL's GRPOTrainer) in one process.
 */
export function planLaunch(
  spec: RunSpec,
  backend: TrainingBackend,
  options: PlanOptions = {},
): LaunchPlan {
  if (backend === 'envace') return envaceLaunch(spec);
  // The run file's faults before the environment's: a person fixes the file first, and a check of
  // the file should not depend on what is installed.
  const trainerConfig = trainerConfigFor(spec);
  if (backend === 'trl' && spec.objective !== 'grpo')
    throw new StudioError(
      'USAGE',
      `--backend trl runs TRL's GRPOTrainer: ${spec.file} has objective "${spec.objective}" (train it with --backend local; \`rehearse export --format trl\` writes rows TRL's SFTTrainer loads).`,
    );
  const launcher = backend === 'torchrun' ? torchrunLauncher(spec, options) : localLauncher(spec);
  const { python, root, env } = trainerProcess(spec, options);
  const configFile = path.join(spec.out_dir, GENERATED_CONFIG);
  // trl: TRL's GRPOTrainer with the studio's runner as its rollout function (trainer/train/trl_grpo.py).
  const command = backend === 'trl' ? 'trl-grpo' : spec.objective;
  return {
    backend,
    argv: [python, ...launcher, '-m', 'trainer', command, '--config', configFile],
    env,
    cwd: root,
    outDir: spec.out_dir,
    trainerConfig,
    configFile,
    runsHere: true,
  };
}

/** The local backend runs the trainer itself, one process: no launcher arguments. */
function localLauncher(spec: RunSpec): string[] {
  if ((spec.hardware.processes ?? 1) > 1 || (spec.hardware.nodes ?? 1) > 1) {
    throw new StudioError(
      'USAGE',
      `${spec.file} asks for ${spec.hardware.processes ?? 1} processes on ${spec.hardware.nodes ?? 1} nodes; the local backend runs one process. Use --backend torchrun.`,
    );
  }
  return [];
}

/** torchrun's arguments (after the Python) for the spec's processes and nodes. */
function torchrunLauncher(spec: RunSpec, options: PlanOptions): string[] {
  const processes = spec.hardware.processes ?? 1;
  const nodes = spec.hardware.nodes ?? 1;
  const launcher = ['-m', 'torch.distributed.run', '--nproc_per_node', String(processes)];
  if (nodes > 1) {
    if (!spec.hardware.master_addr || spec.hardware.node_rank === undefined) {
      throw new StudioError(
        'RUN_SPEC_INVALID',
        `${spec.file}: torchrun on ${nodes} nodes needs hardware.master_addr (node 0's address) and hardware.node_rank (this node's rank).`,
      );
    }
    launcher.push(
      '--nnodes',
      String(nodes),
      '--node_rank',
      String(spec.hardware.node_rank),
      '--master_addr',
      spec.hardware.master_addr,
      '--master_port',
      String(spec.hardware.master_port ?? 29500),
    );
  } else {
    const port = spec.hardware.master_port ?? options.masterPort;
    if (port !== undefined) launcher.push('--master_port', String(port));
  }
  launcher.push('--redirects', '1', '--tee', '1', '--monitor_interval', '0.5');
  return launcher;
}

/** The Python, the studio root and the environment of a trainer process of this spec. */
function trainerProcess(
  spec: RunSpec,
  options: PlanOptions,
): { python: string; root: string; env: Record<string, string> } {
  return trainerInvocation({ ...options, python: options.python ?? spec.hardware.python });
}

/**
 * How every trainer process starts: the interpreter the user chose or the studio's environment
 * (pythonEnv.ts), PYTHONPATH at the folder holding trainer/, and the threading setting its workers
 * inherit. The CLI's checkpoint commands, training runs and exports all go through it.
 */
export function trainerInvocation(options: PlanOptions = {}): {
  python: string;
  root: string;
  env: Record<string, string>;
} {
  const { python } = resolveTrainerPython({ option: options.python, envDir: options.envDir });
  const root = options.trainerRoot ?? studioRoot();
  const env: Record<string, string> = {
    PYTHONPATH: root,
    // The trainer sets it too; torchrun's workers must inherit it (spin-waiting oversubscribes small machines).
    OMP_WAIT_POLICY: 'PASSIVE',
    ...options.extraEnv,
  };
  return { python, root, env };
}

/** True when a model folder holds the ONNX graph the policy host loads. */
export function isExported(modelFolder: string): boolean {
  return existsSync(path.join(modelFolder, 'onnx', 'model.onnx'));
}

/**
 * The trainer's `export` of a trained model folder (a run's `final/`, or a checkpoint) to ONNX in
 * place, with the spec's `hyperparameters.export`: for runs whose spec turned `train.export_at_end`
 * off, so that the result can be used as a policy. One local process.
 */
export function planExport(
  spec: RunSpec,
  modelFolder: string,
  options: PlanOptions = {},
): LaunchPlan {
  const exportSection = spec.hyperparameters?.['export'];
  const trainerConfig: Record<string, unknown> = {
    device: 'cpu',
    ...(spec.hardware.threads !== undefined ? { threads: spec.hardware.threads } : {}),
    model: { path: modelFolder },
    ...(exportSection ? { export: structuredClone(exportSection) } : {}),
  };
  const faults = trainerConfigFaults(trainerConfig, ['export']);
  if (faults.length) throw invalidRunSpec(spec.file, faults);
  // The environment after the run file's faults, as in planLaunch.
  const { python, root, env } = trainerProcess(spec, options);
  const configFile = path.join(spec.out_dir, EXPORT_CONFIG);
  return {
    backend: 'local',
    argv: [python, '-m', 'trainer', 'export', '--config', configFile],
    env,
    cwd: root,
    outDir: spec.out_dir,
    trainerConfig,
    configFile,
    runsHere: true,
  };
}
