import * as path from 'node:path';
import type { TrainerEvent } from '../../core/training/launch/supervisor';
import { parseTrainerEventLine } from '../../core/training/launch/supervisor';
import { prepareTrainingRun, startTrainingRun } from '../../core/training/launch/lifecycle';
import { runProgram } from './process';
import { ROOT, trainerPython, verbose } from './studio';
import { sayError } from './terminal';

/** How {@link trainingRun} starts a run. */
export interface TrainingRunOptions {
  /** Every trainer event, as it arrives. */
  onEvent?: (event: TrainerEvent) => void;
  /** The run file's `hardware.processes` (more than one: one BLAS thread per rank). */
  processes?: number;
}

/**
 * A training run (sft, grpo) from its run file, started as `rehearse train` and the editor start
 * one (core/training/launch/lifecycle.ts): the backend from its hardware (torchrun, on a free port,
 * for processes > 1), launch.json, supervision, resume from the run folder's newest checkpoint, the
 * final export. Several processes get `OPENBLAS_NUM_THREADS=1` (one rank per core;
 * docs/default-policy.md measured it). Ctrl-C cancels the trainer (its process group is its own).
 * Rejects when the run or its export fails.
 */
export async function trainingRun(
  runFile: string,
  options: TrainingRunOptions = {},
): Promise<void> {
  const extraEnv = (options.processes ?? 1) > 1 ? { extraEnv: { OPENBLAS_NUM_THREADS: '1' } } : {};
  const prepared = await prepareTrainingRun({
    runFile,
    options: { python: trainerPython(), ...extraEnv },
  });
  if (verbose()) sayError(`$ ${prepared.command}`);
  const started = await startTrainingRun(prepared, {
    onProcess: (proc) => {
      if (verbose()) proc.onLog((line) => sayError(line));
    },
  });
  if (options.onEvent) started.process.onEvent(options.onEvent);
  const cancel = () => started.process.cancel();
  process.on('SIGINT', cancel);
  const { outcome, exportError } = await started.done.finally(() =>
    process.removeListener('SIGINT', cancel),
  );
  const name = path.basename(runFile);
  if (outcome.status !== 'done')
    throw new Error(
      `${name}: ${outcome.error?.code}: ${outcome.error?.message}\n${outcome.stderrTail}`,
    );
  if (exportError) throw new Error(`${name}: the final export failed: ${exportError}`);
}

/**
 * A trainer command that is not a training run (`tokenizer`, `init`): `python -m trainer <command>
 * --config <file>`, its stdout read as trainer events.
 */
export async function trainerCommand(
  command: string,
  config: string,
  onEvent: (event: TrainerEvent) => void,
): Promise<void> {
  await runProgram(trainerPython(), ['-m', 'trainer', command, '--config', config], {
    cwd: ROOT,
    verbose: verbose(),
    onLine: (line) => {
      const event = parseTrainerEventLine(line);
      if (event) onEvent(event);
    },
  });
}
