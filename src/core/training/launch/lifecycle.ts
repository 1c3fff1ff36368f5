import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { errorMessage } from '../../base/errors';
import { freePort } from '../../base/freePort';
import { writeFileInside, writeRootOf } from '../../base/writePath';
import type { PlanOptions } from './backends';
import { isExported, planExport, planLaunch } from './backends';
import type { LaunchPlan, TrainingBackend } from './launchPlan';
import { formatCommand } from './launchPlan';
import type { LaunchRecord } from './launchRecord';
import { LAUNCH_RECORD } from './launchRecord';
import type { HardwareSpec, RunSpec } from './runSpec';
import { checkRunSpecPaths, loadRunSpec } from './runSpec';
import type { SuperviseOptions, TrainingOutcome } from './supervisor';
import { TRAINER_LOG, TrainingProcess, latestCheckpoint } from './supervisor';

/** What starting a training run takes: the run file, and what the caller chose besides it. */
export interface TrainingRunRequest {
  /** The run file (schemas/training-run.schema.json). */
  runFile: string;
  /** The backend a person named (`--backend`); default: {@link chooseBackend} of the run file. */
  backend?: TrainingBackend;
  /** The trainer's Python, the environment folder, extra variables (the port is picked here). */
  options?: Omit<PlanOptions, 'masterPort'>;
  /** False: no free port is picked for torchrun (a dry run shows the command without one). */
  pickPort?: boolean;
}

/** A run planned and checked but not started: what a person is shown before it starts. */
export interface PreparedTrainingRun {
  spec: RunSpec;
  plan: LaunchPlan;
  /** The plan as one line a person can read and paste. */
  command: string;
  /** The checkpoint a launch resumes from (`checkpoints/latest`); undefined: from the base model. */
  resumeFrom?: string;
  /** What the plan was made with; the final export is planned with the same. */
  options: PlanOptions;
}

/** What a started run tells its caller as it goes; every hook is optional. */
export interface TrainingRunHooks {
  /** Each process started: the trainer's, then the final export's (to follow its log). */
  onProcess?(process: TrainingProcess): void;
  /** The trainer has ended; awaited before the final export is planned. */
  onTrainerEnded?(outcome: TrainingOutcome): void | Promise<void>;
  /** The final export is about to start with this plan (the trainer did not export the model). */
  onExport?(plan: LaunchPlan): void;
}

/** How a run ended, its final export included. */
export interface TrainingRunResult {
  outcome: TrainingOutcome;
  /** The trained model, exported to ONNX: set when the run is done and its export is there. */
  model?: string;
  /** Why the final export failed (the run itself is done). */
  exportError?: string;
}

/** A run whose trainer is running. */
export interface StartedTrainingRun {
  /** The trainer's process (cancel it, follow its events). */
  process: TrainingProcess;
  /** Resolves when the trainer and the final export have ended. */
  done: Promise<TrainingRunResult>;
}

/**
 * The backend a run file asks for by its hardware: `torchrun` for several processes or nodes, else
 * `local`. The CLI (without `--backend`), the editor and the recipes choose alike.
 */
export function chooseBackend(hardware: HardwareSpec): TrainingBackend {
  return (hardware.processes ?? 1) > 1 || (hardware.nodes ?? 1) > 1 ? 'torchrun' : 'local';
}

/**
 * Reads a run file and plans its launch: the backend, a free rendezvous port for torchrun on one
 * node (unless the run file names one), the exact command; then checks that every path the run
 * reads is there (not for envace, which runs elsewhere) and finds the checkpoint it resumes from.
 * Starts and writes nothing.
 */
export async function prepareTrainingRun(
  request: TrainingRunRequest,
): Promise<PreparedTrainingRun> {
  const spec = await loadRunSpec(request.runFile);
  const backend = request.backend ?? chooseBackend(spec.hardware);
  const masterPort =
    request.pickPort !== false &&
    backend === 'torchrun' &&
    (spec.hardware.nodes ?? 1) === 1 &&
    !spec.hardware.master_port
      ? await freePort()
      : undefined;
  const options: PlanOptions = { ...request.options, masterPort };
  const plan = planLaunch(spec, backend, options);
  const command = formatCommand(plan);
  if (!plan.runsHere) return { spec, plan, command, options };
  // Every path the run reads must be there before anything is shown or started (issue 27).
  checkRunSpecPaths(spec);
  return { spec, plan, command, options, resumeFrom: await latestCheckpoint(plan.outDir) };
}

/**
 * Starts a prepared run: writes its launch record ({@link LAUNCH_RECORD}), starts the trainer with
 * its stderr appended to the run folder's trainer.log, and supervises it. The trainer resumes by
 * itself from the run folder's newest checkpoint. When it is done and did not export its final model
 * (`train.export_at_end` off), runs the trainer's `export` on it, so that every finished run leaves
 * a model the policy host loads.
 */
export async function startTrainingRun(
  prepared: PreparedTrainingRun,
  hooks: TrainingRunHooks = {},
  supervise: SuperviseOptions = {},
): Promise<StartedTrainingRun> {
  const { plan } = prepared;
  const record: LaunchRecord = {
    runFile: prepared.spec.file,
    backend: plan.backend,
    command: prepared.command,
  };
  await writeFileInside(
    writeRootOf(plan.outDir),
    path.join(plan.outDir, LAUNCH_RECORD),
    JSON.stringify(record, null, 1) + '\n',
  );
  const trainer = await TrainingProcess.start(plan, {
    logFile: path.join(plan.outDir, TRAINER_LOG),
    ...supervise,
  });
  hooks.onProcess?.(trainer);
  const done = trainer.done.then(async (outcome) => {
    await hooks.onTrainerEnded?.(outcome);
    return exportFinal(prepared, outcome, hooks);
  });
  return { process: trainer, done };
}

/** The final export after a done run, unless the trainer exported its model already. */
async function exportFinal(
  prepared: PreparedTrainingRun,
  outcome: TrainingOutcome,
  hooks: TrainingRunHooks,
): Promise<TrainingRunResult> {
  const final = outcome.final;
  if (outcome.status !== 'done' || !final) return { outcome };
  if (isExported(final)) return { outcome, model: final };
  // A transformers run exported what the studio's code can run itself (final-policy/, or a warning
  // that says why not); its final/ is a Hugging Face or adapter folder, not the studio's own export.
  if (outcome.policy)
    return isExported(outcome.policy) ? { outcome, model: outcome.policy } : { outcome };
  if (savedByTransformers(final)) return { outcome };
  try {
    const plan = planExport(prepared.spec, final, prepared.options);
    hooks.onExport?.(plan);
    const exporter = await TrainingProcess.start(plan, {
      logFile: path.join(plan.outDir, TRAINER_LOG),
    });
    hooks.onProcess?.(exporter);
    const exported = await exporter.done;
    if (exported.status === 'cancelled') throw new Error('INTERRUPTED: the export was cancelled.');
    if (exported.status !== 'done')
      throw new Error(`${exported.error?.code}: ${exported.error?.message}`);
  } catch (err) {
    return { outcome, exportError: errorMessage(err) };
  }
  return { outcome, model: final };
}

/** Whether a run's final folder was written by transformers or PEFT (`save_pretrained`), not the studio. */
function savedByTransformers(folder: string): boolean {
  return ['adapter_config.json', 'model.safetensors', 'model.safetensors.index.json'].some((f) =>
    existsSync(path.join(folder, f)),
  );
}
