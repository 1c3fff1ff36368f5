import * as path from 'node:path';
import type { SingleBar } from 'cli-progress';
import type { StudioErrorCode } from '../../core/base/errorCodes';
import { StudioError } from '../../core/base/errors';
import { writeFileInside, writeRootOf } from '../../core/base/writePath';
import type { LaunchPlan, TrainingBackend } from '../../core/training/launch/launchPlan';
import {
  TRAINING_BACKENDS,
  formatCommand,
  shellQuote,
} from '../../core/training/launch/launchPlan';
import type { PreparedTrainingRun, TrainingRunResult } from '../../core/training/launch/lifecycle';
import { prepareTrainingRun, startTrainingRun } from '../../core/training/launch/lifecycle';
import type { TrainerEvent, TrainingProcess } from '../../core/training/launch/supervisor';
import { TRAINER_LOG } from '../../core/training/launch/supervisor';
import { memoryPlanLines, refuseUnlessFits } from '../../core/training/launch/memoryPlanFit';
import type { CliIO } from '../io';
import { progressBar } from '../io';
import type { MemoryPlanArgs } from '../../core/training/launch/memoryPlanSettings';
import { hasPlanOptions, runMemoryPlan } from '../../core/training/launch/memoryPlanSettings';

/** Options of `rehearse train`. */
export interface TrainArgs extends MemoryPlanArgs {
  config?: string;
  backend?: string;
  dryRun?: boolean;
  json?: boolean;
  progress?: boolean;
  verbose?: boolean;
  /** The trainer's Python (default: the run file's, else the studio's environment). */
  python?: string;
}

/** `loss 5.12 (act 5.20, rehearse 4.98)` from a step event. */
function lossText(e: TrainerEvent): string {
  const num = (v: unknown) => (typeof v === 'number' ? v.toFixed(3) : '—');
  const roles = (e['roles'] ?? {}) as Record<string, Record<string, unknown>>;
  const perRole = Object.entries(roles)
    .map(([role, r]) => `${role} ${num(r['loss'] ?? r['pg_loss'])}`)
    .join(', ');
  return `${num(e['loss'])}${perRole ? ` (${perRole})` : ''}`;
}

/**
 * `rehearse train --config run.json`: shows the exact command, starts the trainer on the chosen
 * backend (by default the one the run file's hardware asks for), shows progress (steps, loss per
 * role, tokens/s, ETA), exports the final model if the trainer did not, and on Ctrl-C cancels the
 * trainer and says how to resume; all through the one training-run lifecycle the editor uses.
 * `--backend envace` writes EnvACE's launch script and runs nothing.
 */
export async function trainCommand(args: TrainArgs, io: CliIO): Promise<number> {
  if (!args.config)
    throw new StudioError(
      'USAGE',
      'Missing --config <run.json>: the training run to start (see docs/training-runs.md).',
    );
  if (!args.dryRun && hasPlanOptions(args))
    throw new StudioError(
      'USAGE',
      'The --plan-* options shape the memory plan of --dry-run: add --dry-run.',
    );
  const named = args.backend as TrainingBackend | undefined;
  if (named !== undefined && !TRAINING_BACKENDS.includes(named))
    throw new StudioError(
      'USAGE',
      `--backend must be one of ${TRAINING_BACKENDS.join(', ')}, not "${args.backend}".`,
    );
  const prepared = await prepareTrainingRun({
    runFile: args.config,
    backend: named,
    options: { python: args.python },
    pickPort: !args.dryRun,
  });
  const { plan, resumeFrom } = prepared;
  if (!plan.runsHere) return handOver(plan, args, io);
  if (args.dryRun) return await dryRun(prepared, args, io);

  io.err(`command: ${prepared.command}`);
  if (resumeFrom) io.err(`resuming from ${resumeFrom}`);
  const progress = new TrainProgress(args, io);
  // Ctrl-C stops the process running now: the trainer, or the final export after it.
  let running: TrainingProcess | undefined;
  const onSigint = () => {
    io.err('\ncancelling the trainer (it stops at once; the newest checkpoint stays)...');
    running?.cancel();
  };
  process.on('SIGINT', onSigint);
  let result: TrainingRunResult;
  try {
    const started = await startTrainingRun(prepared, {
      onProcess: (proc) => {
        running = proc;
        if (args.verbose) proc.onLog((line) => io.err(`[trainer] ${line}`));
      },
      onTrainerEnded: () => progress.stop(),
      onExport: (exportPlan) => io.err(`export: ${formatCommand(exportPlan)}`),
    });
    started.process.onEvent((e) => progress.event(e));
    result = await started.done;
  } finally {
    process.removeListener('SIGINT', onSigint);
    progress.stop();
  }
  return report(prepared, result, progress.steps, args, io);
}

/**
 * `--dry-run`: the command, the trainer config, where it would resume and the memory plan per GPU;
 * nothing written. A plan that does not fit is printed, then refused (`MEMORY_PLAN_DOES_NOT_FIT`).
 */
async function dryRun(prepared: PreparedTrainingRun, args: TrainArgs, io: CliIO): Promise<number> {
  const { plan, resumeFrom } = prepared;
  const memory = await memoryPlanOrWhyNot(prepared, args);
  if (args.json) {
    io.out(
      JSON.stringify(
        {
          plan: planJson(plan),
          resumeFrom: resumeFrom ?? null,
          memoryPlan: 'plan' in memory ? memory.plan : null,
          ...('whyNot' in memory ? { memoryPlanError: memory.whyNot } : {}),
        },
        null,
        2,
      ),
    );
  } else {
    io.out(`command: ${prepared.command}`);
    io.out(`cwd: ${plan.cwd}`);
    io.out(
      `trainer config (written to ${plan.configFile} at launch):\n${JSON.stringify(plan.trainerConfig, null, 2)}`,
    );
    io.out(
      resumeFrom
        ? `would resume from ${resumeFrom}`
        : 'would start from the base model (no checkpoint in the run folder)',
    );
    if ('plan' in memory) for (const line of memoryPlanLines(memory.plan)) io.out(line);
    else io.out(`memory plan: none (${memory.whyNot.code}: ${memory.whyNot.message})`);
  }
  if ('plan' in memory) refuseUnlessFits(memory.shape, memory.plan);
  return 0;
}

/**
 * The run's memory plan, or why its base's config.json gives none. Asked for with `--plan-*`
 * options, a config.json the plan cannot read is the command's error; without them, a dry run
 * still shows the rest.
 */
async function memoryPlanOrWhyNot(
  prepared: PreparedTrainingRun,
  args: TrainArgs,
): Promise<
  Awaited<ReturnType<typeof runMemoryPlan>> | { whyNot: { code: StudioErrorCode; message: string } }
> {
  try {
    return await runMemoryPlan(prepared.spec, args);
  } catch (err) {
    if (!(err instanceof StudioError) || err.code === 'USAGE' || hasPlanOptions(args)) throw err;
    return { whyNot: { code: err.code, message: err.message } };
  }
}

/** The progress of a run on stderr: a bar (or a line per step), resumes and checkpoints. */
class TrainProgress {
  readonly steps: TrainerEvent[] = [];
  private readonly bar: SingleBar | undefined;
  private barStarted = false;

  constructor(
    private readonly args: TrainArgs,
    private readonly io: CliIO,
  ) {
    this.bar =
      args.progress === false || args.json
        ? undefined
        : progressBar({
            format:
              'train {bar} {value}/{total} steps | loss {loss} | {tps} tok/s | ETA {eta_formatted}',
            barsize: 20,
            etaBuffer: 20,
          });
  }

  event(e: TrainerEvent): void {
    const { bar, args, io } = this;
    if (e.event === 'step') this.step(e);
    // --backend trl: TRL's logged numbers of the step (its loss; tokens/s it does not log).
    else if (e.event === 'trl_step')
      this.step({ ...e, loss: (e['logs'] as Record<string, unknown> | undefined)?.['loss'] });
    else if (e.event === 'resume' && !args.json)
      io.err(`resumed from step ${String(e['step'])} (${String(e['path'])})`);
    else if (e.event === 'checkpoint' && !bar && !args.json)
      io.err(`checkpoint: step ${String(e['step'])} at ${String(e['path'])}`);
  }

  private step(e: TrainerEvent): void {
    const { bar } = this;
    this.steps.push(e);
    const total = Number(e['steps'] ?? e['iterations'] ?? 0) || Number(e['step']);
    const payload = {
      loss: lossText(e),
      tps: typeof e['tokens_per_s'] === 'number' ? Math.round(e['tokens_per_s']) : '—',
    };
    if (bar && !this.barStarted) {
      bar.start(total, Number(e['step']) - 1, payload);
      this.barStarted = true;
    }
    bar?.setTotal(total);
    bar?.update(Number(e['step']), payload);
    if (!bar && !this.args.json)
      this.io.err(
        `step ${String(e['step'])}/${total} · loss ${payload.loss} · ${payload.tps} tok/s`,
      );
  }

  /** Ends the bar (once the trainer has ended, before the export or the summary). */
  stop(): void {
    if (this.barStarted) this.bar?.stop();
    this.barStarted = false;
  }
}

/** The summary of an ended run and the exit status: 0 done, 130 cancelled, 1 failed. */
function report(
  prepared: PreparedTrainingRun,
  result: TrainingRunResult,
  steps: TrainerEvent[],
  args: TrainArgs,
  io: CliIO,
): number {
  const { plan } = prepared;
  const { outcome } = result;
  if (args.json)
    io.out(
      JSON.stringify(
        {
          plan: planJson(plan),
          outcome,
          lastStep: steps.at(-1) ?? null,
          model: result.model ?? null,
          ...(result.exportError !== undefined ? { exportError: result.exportError } : {}),
        },
        null,
        2,
      ),
    );
  if (outcome.status === 'done') return reportDone(prepared, result, steps, args, io);
  if (outcome.status === 'cancelled') {
    io.err(
      `rehearse: ${outcome.error?.message ?? 'cancelled'}${outcome.lastCheckpoint ? `\n  resume: ${resumeCommand(args)}` : ''}`,
    );
    return 130;
  }
  io.err(
    `rehearse: the trainer failed: ${outcome.error?.code}: ${outcome.error?.message}` +
      (outcome.stderrTail
        ? `\n--- trainer log (last lines; all of it in ${path.join(plan.outDir, TRAINER_LOG)}) ---\n${outcome.stderrTail}`
        : ''),
  );
  return 1;
}

/** A done run: its summary line, or why the export of its final model failed (exit 1). */
function reportDone(
  prepared: PreparedTrainingRun,
  result: TrainingRunResult,
  steps: TrainerEvent[],
  args: TrainArgs,
  io: CliIO,
): number {
  const { outcome } = result;
  if (result.exportError !== undefined) {
    io.err(
      `rehearse: the export of ${outcome.final} failed: ${result.exportError} (all of it in ${path.join(prepared.plan.outDir, TRAINER_LOG)})`,
    );
    return 1;
  }
  if (!args.json)
    io.out(
      `done: ${steps.at(-1)?.['step'] ?? 0} steps${outcome.resumedFrom ? ` (resumed at step ${outcome.resumedFrom.step})` : ''} · final model ${result.model ?? outcome.final ?? '(not exported)'} · run folder ${prepared.plan.outDir}`,
    );
  return 0;
}

/** The command that resumes a cancelled run: the same one again. */
function resumeCommand(args: TrainArgs): string {
  return [
    'rehearse',
    'train',
    '--config',
    args.config ?? '',
    ...(args.backend !== undefined && args.backend !== 'local' ? ['--backend', args.backend] : []),
  ]
    .map(shellQuote)
    .join(' ');
}

function planJson(plan: LaunchPlan) {
  return {
    backend: plan.backend,
    argv: plan.argv,
    env: plan.env,
    cwd: plan.cwd,
    outDir: plan.outDir,
    configFile: plan.configFile ?? null,
    trainerConfig: plan.trainerConfig ?? null,
    command: formatCommand(plan),
    runsHere: plan.runsHere,
  };
}

/** envace: write the launch script beside the run folder and say where to run it. */
async function handOver(plan: LaunchPlan, args: TrainArgs, io: CliIO): Promise<number> {
  const scriptFile = path.join(plan.outDir, 'launch-envace.sh');
  const { script } = plan;
  if (script === undefined) throw new Error('An envace launch plan without its launch script.');
  if (!args.dryRun) {
    await writeFileInside(writeRootOf(plan.outDir), scriptFile, script, { mode: 0o755 });
  }
  if (args.json) {
    io.out(
      JSON.stringify(
        { plan: { ...planJson(plan), script }, scriptFile: args.dryRun ? null : scriptFile },
        null,
        2,
      ),
    );
    return 0;
  }
  io.out(`command: ${formatCommand(plan)}`);
  io.out(`cwd: ${plan.cwd}`);
  io.out(
    args.dryRun
      ? 'launch script (not written: --dry-run):'
      : `launch script written to ${scriptFile}:`,
  );
  io.out(script);
  io.out(
    'Not started here: EnvACE trains on a Ray cluster. Copy the exported tool dataset and its parquet to the paths above, ' +
      'then run the script on the Ray head node. Running it again resumes from the newest checkpoint (trainer.resume_mode=auto).',
  );
  return 0;
}
