import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { SingleBar } from 'cli-progress';
import { StudioError } from '../../core/base/errors';
import { freePort } from '../../core/base/freePort';
import { planLaunch } from '../../core/training/launch/backends';
import type { LaunchPlan, TrainingBackend } from '../../core/training/launch/launchPlan';
import {
  TRAINING_BACKENDS,
  formatCommand,
  shellQuote,
} from '../../core/training/launch/launchPlan';
import { checkRunSpecPaths, loadRunSpec } from '../../core/training/launch/runSpec';
import type { TrainerEvent, TrainingOutcome } from '../../core/training/launch/supervisor';
import {
  TRAINER_LOG,
  TrainingProcess,
  latestCheckpoint,
} from '../../core/training/launch/supervisor';
import type { CliIO } from '../io';

/** Options of `rehearse train`. */
export interface TrainArgs {
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
 * backend, shows progress (steps, loss per role, tokens/s, ETA), and on Ctrl-C cancels the trainer
 * and says how to resume. `--backend envace` writes EnvACE's launch script and runs nothing.
 */
export async function trainCommand(args: TrainArgs, io: CliIO): Promise<number> {
  if (!args.config)
    throw new StudioError(
      'USAGE',
      'Missing --config <run.json>: the training run to start (see docs/training-runs.md).',
    );
  const backend = (args.backend ?? 'local') as TrainingBackend;
  if (!TRAINING_BACKENDS.includes(backend))
    throw new StudioError(
      'USAGE',
      `--backend must be one of ${TRAINING_BACKENDS.join(', ')}, not "${args.backend}".`,
    );
  const spec = await loadRunSpec(args.config);
  const masterPort =
    backend === 'torchrun' &&
    (spec.hardware.nodes ?? 1) === 1 &&
    !spec.hardware.master_port &&
    !args.dryRun
      ? await freePort()
      : undefined;
  const plan = planLaunch(spec, backend, { masterPort, python: args.python });
  const resumeCommand = [
    'rehearse',
    'train',
    '--config',
    args.config,
    ...(backend !== 'local' ? ['--backend', backend] : []),
  ]
    .map(shellQuote)
    .join(' ');

  if (!plan.runsHere) return handOver(plan, args, io);
  // A dry run says whether the run would start: every path it reads must be there (issue 27).
  checkRunSpecPaths(spec);
  const resumeFrom = await latestCheckpoint(plan.outDir);
  if (args.dryRun) {
    if (args.json)
      io.out(JSON.stringify({ plan: planJson(plan), resumeFrom: resumeFrom ?? null }, null, 2));
    else {
      io.out(`command: ${formatCommand(plan)}`);
      io.out(`cwd: ${plan.cwd}`);
      io.out(
        `trainer config (written to ${plan.configFile} at launch):\n${JSON.stringify(plan.trainerConfig, null, 2)}`,
      );
      io.out(
        resumeFrom
          ? `would resume from ${resumeFrom}`
          : 'would start from the base model (no checkpoint in the run folder)',
      );
    }
    return 0;
  }

  io.err(`command: ${formatCommand(plan)}`);
  if (resumeFrom) io.err(`resuming from ${resumeFrom}`);
  const proc = await TrainingProcess.start(plan, { logFile: path.join(plan.outDir, TRAINER_LOG) });
  const bar =
    args.progress === false || args.json
      ? undefined
      : new SingleBar({
          format:
            'train {bar} {value}/{total} steps | loss {loss} | {tps} tok/s | ETA {eta_formatted}',
          stream: process.stderr,
          barsize: 20,
          etaBuffer: 20,
        });
  let barStarted = false;
  const steps: TrainerEvent[] = [];
  if (args.verbose) proc.onLog((line) => io.err(`[trainer] ${line}`));
  proc.onEvent((e) => {
    if (e.event === 'step') {
      steps.push(e);
      const total = Number(e['steps'] ?? e['iterations'] ?? 0) || Number(e['step']);
      const payload = {
        loss: lossText(e),
        tps: typeof e['tokens_per_s'] === 'number' ? Math.round(e['tokens_per_s']) : '—',
      };
      if (bar && !barStarted) {
        bar.start(total, Number(e['step']) - 1, payload);
        barStarted = true;
      }
      bar?.setTotal(total);
      bar?.update(Number(e['step']), payload);
      if (!bar && !args.json)
        io.err(`step ${String(e['step'])}/${total} · loss ${payload.loss} · ${payload.tps} tok/s`);
    } else if (e.event === 'resume' && !args.json)
      io.err(`resumed from step ${String(e['step'])} (${String(e['path'])})`);
    else if (e.event === 'checkpoint' && !bar && !args.json)
      io.err(`checkpoint: step ${String(e['step'])} at ${String(e['path'])}`);
  });
  const onSigint = () => {
    io.err('\ncancelling the trainer (it stops at once; the newest checkpoint stays)...');
    proc.cancel();
  };
  process.on('SIGINT', onSigint);
  let outcome: TrainingOutcome;
  try {
    outcome = await proc.done;
  } finally {
    process.removeListener('SIGINT', onSigint);
    if (barStarted) bar?.stop();
  }

  if (args.json)
    io.out(
      JSON.stringify({ plan: planJson(plan), outcome, lastStep: steps.at(-1) ?? null }, null, 2),
    );
  if (outcome.status === 'done') {
    if (!args.json)
      io.out(
        `done: ${steps.at(-1)?.['step'] ?? 0} steps${outcome.resumedFrom ? ` (resumed at step ${outcome.resumedFrom.step})` : ''} · final model ${outcome.final ?? '(not exported)'} · run folder ${plan.outDir}`,
      );
    return 0;
  }
  if (outcome.status === 'cancelled') {
    io.err(
      `rehearse: ${outcome.error?.message ?? 'cancelled'}${outcome.lastCheckpoint ? `\n  resume: ${resumeCommand}` : ''}`,
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
    await mkdir(plan.outDir, { recursive: true });
    await writeFile(scriptFile, script, { mode: 0o755 });
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
