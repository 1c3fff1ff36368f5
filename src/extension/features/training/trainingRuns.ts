import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../../../core/base/disposable';
import { StudioError, errorMessage } from '../../../core/base/errors';
import type { PlanOptions } from '../../../core/training/launch/backends';
import { formatCommand } from '../../../core/training/launch/launchPlan';
import type {
  PreparedTrainingRun,
  StartedTrainingRun,
  TrainingRunHooks,
  TrainingRunResult,
} from '../../../core/training/launch/lifecycle';
import { prepareTrainingRun, startTrainingRun } from '../../../core/training/launch/lifecycle';
import { memoryPlanText } from '../../../core/training/launch/memoryPlanSettings';
import type { TrainingOutcome, TrainingProcess } from '../../../core/training/launch/supervisor';
import { TrainingRun } from '../../../core/training/run/trainingRun';
import { CONTEXT_KEYS } from '../../commands';
import type { ErrorAction } from '../../errorActions';
import { executeCommand, showError } from '../../registerCommand';

/** How many lines of the trainer's log a crash report quotes in its notification. */
const NOTIFIED_TAIL_LINES = 6;

/** What a run asks of the editor: its dashboard shown, or a follow-up command (Use as Policy, Compare, Resume). */
export interface TrainingRunAttention {
  run: TrainingRun;
  action: 'usePolicy' | 'compare' | 'resume' | 'show';
}

/** What a launch asks the person before it starts: the exact command. Replaceable by tests. */
export type ConfirmLaunch = (message: string, detail: string) => Thenable<boolean>;

/** The modal confirmation with the command in its detail. */
export const confirmWithModal: ConfirmLaunch = async (message, detail) =>
  (await vscode.window.showInformationMessage(message, { modal: true, detail }, 'Start')) ===
  'Start';

/**
 * The training runs of this editor: launches through the core's launcher and supervisor (one run
 * folder at a time per process), after showing the exact command; streams each run's events to its
 * {@link TrainingRun}, its log to the "Rehearsal Training" output channel and to trainer.log; on
 * success exports the final model when the trainer did not; on a crash says why with the log tail
 * and offers Resume.
 */
export class TrainingRuns extends Disposable {
  private readonly runs = new Map<string, TrainingRun>();
  readonly log: vscode.OutputChannel;
  /** Asks before a launch; the editor tests replace it to read what is shown. */
  confirmLaunch: ConfirmLaunch = confirmWithModal;
  /** Why the last launch could not start, as its error notification says (tests read it). */
  lastLaunchError: string | undefined;
  private readonly ended = this._register(new vscode.EventEmitter<TrainingRun>());
  /** Fires when a run's process (and its export) has finished. */
  readonly onDidEnd = this.ended.event;
  private readonly attention = this._register(new vscode.EventEmitter<TrainingRunAttention>());
  /** Fires when a run is shown or ends and asks for its dashboard or a follow-up command. */
  readonly onDidAskAttention = this.attention.event;

  constructor(
    /** The trainer's Python as the settings name it, and the editor's environment folder. */
    private readonly python: () => Pick<PlanOptions, 'python' | 'envDir'>,
  ) {
    super();
    this.log = this._register(vscode.window.createOutputChannel('Rehearsal Training'));
    this._register({
      dispose: () => {
        for (const r of this.runs.values()) {
          r.process?.cancel();
          r.dispose();
        }
        this.runs.clear();
      },
    });
  }

  /** The runs known to this editor (tests read them). */
  get all(): TrainingRun[] {
    return [...this.runs.values()];
  }

  /** The run of a folder, created (and replotted from its events) when first asked for. */
  async open(outDir: string): Promise<TrainingRun> {
    const key = path.resolve(outDir);
    let run = this.runs.get(key);
    if (!run) {
      run = new TrainingRun(key);
      this.runs.set(key, run);
      await run.load();
      if (run.state.status === 'running' || run.state.status === 'waiting') run.follow();
    }
    return run;
  }

  /**
   * Launches a run file: shows the exact command (modal), then starts the trainer. Resolves with the
   * run once started; undefined when the person declined or the run file is wrong (said in a message).
   */
  async start(runFile: string): Promise<TrainingRun | undefined> {
    let prepared: PreparedTrainingRun;
    try {
      prepared = await prepareTrainingRun({ runFile, options: this.python() });
    } catch (err) {
      this.lastLaunchError = errorMessage(err);
      showLaunchError(err, '', runFile);
      return undefined;
    }
    const { spec, plan, command, resumeFrom } = prepared;
    const run = await this.open(plan.outDir);
    if (run.attached) {
      void vscode.window.showWarningMessage(
        `Rehearsal: the training run ${run.name} is already running.`,
      );
      this.attention.fire({ run, action: 'show' });
      return run;
    }
    // What the run will hold in GPU memory, from its own settings (LoRA, checkpointing, row length),
    // as `rehearse train --dry-run` plans it; the envace backend runs elsewhere.
    const memory = plan.backend === 'envace' ? [] : ['', ...(await memoryPlanText(spec))];
    const confirmed = await this.confirmLaunch(
      `${resumeFrom ? 'Resume' : 'Start'} the training run "${spec.name}"?`,
      [
        command,
        '',
        `in ${plan.cwd}`,
        resumeFrom ? `resumes from ${resumeFrom}` : 'starts from the base model',
        `run folder ${plan.outDir}`,
        ...memory,
      ].join('\n'),
    );
    if (!confirmed) return undefined;

    Object.assign(run, {
      runFile: spec.file,
      backend: plan.backend,
      command,
      base: spec.base,
      model: undefined,
    });
    this.log.appendLine(`$ ${command}`);
    if (resumeFrom) this.log.appendLine(`resuming from ${resumeFrom}`);
    let started: StartedTrainingRun;
    try {
      started = await startTrainingRun(prepared, this.hooksFor(run));
    } catch (err) {
      this.lastLaunchError = errorMessage(err);
      showLaunchError(err, 'the training run could not start: ');
      return undefined;
    }
    run.attach(started.process);
    this.updateContext();
    run.finished = started.done.then((result) => this.whenEnded(run, result));
    this.attention.fire({ run, action: 'show' });
    return run;
  }

  /** How this editor follows a run's processes: the log channel, the run's state, the export's phase. */
  private hooksFor(run: TrainingRun): TrainingRunHooks {
    return {
      onProcess: (proc) => this.followLog(proc),
      onTrainerEnded: async (outcome) => {
        await run.detach(outcome);
        this.updateContext();
        this.log.appendLine(
          `${run.name}: ${outcome.status}${outcome.error ? ` (${outcome.error.code}: ${outcome.error.message})` : ''}`,
        );
      },
      onExport: (plan) => {
        run.afterRun = { phase: 'exporting' };
        run.touch();
        this.log.appendLine(`$ ${formatCommand(plan)}`);
      },
    };
  }

  /** Resumes a cancelled or crashed run from its newest checkpoint (the same command again). */
  async resume(run: TrainingRun): Promise<TrainingRun | undefined> {
    if (run.attached) throw new Error(`${run.name} is running.`);
    let runFile = run.runFile;
    if (!runFile || !existsSync(runFile)) {
      runFile = (
        await vscode.window.showOpenDialog({
          canSelectMany: false,
          filters: { 'Training run': ['json'] },
          title: `The run file of ${run.name}`,
          openLabel: 'Resume With This Run File',
        })
      )?.[0]?.fsPath;
      if (!runFile) return undefined;
    }
    return this.start(runFile);
  }

  /** Cancels a run's process: SIGINT, the trainer stops and keeps its newest checkpoint. */
  cancel(run: TrainingRun): boolean {
    if (!run.process) return false;
    this.log.appendLine(`cancelling ${run.name}…`);
    run.process.cancel();
    return true;
  }

  private followLog(proc: TrainingProcess): void {
    proc.onLog((line) => this.log.appendLine(line));
    proc.onEvent((e) => {
      if (e.event !== 'step') this.log.appendLine(JSON.stringify(e));
    });
  }

  private updateContext(): void {
    void vscode.commands.executeCommand(
      'setContext',
      CONTEXT_KEYS.training,
      this.all.some((r) => r.attached),
    );
  }

  private whenEnded(run: TrainingRun, result: TrainingRunResult): TrainingOutcome {
    const { outcome } = result;
    if (outcome.status === 'done') {
      this.offerModel(run, result);
    } else if (outcome.status === 'cancelled') {
      void vscode.window
        .showInformationMessage(
          `Rehearsal: training run ${run.name} cancelled. ${outcome.error?.message ?? ''}`,
          'Resume',
        )
        .then((a) => {
          if (a) this.attention.fire({ run, action: 'resume' });
        });
    } else {
      const tail = outcome.stderrTail
        .split('\n')
        .filter(Boolean)
        .slice(-NOTIFIED_TAIL_LINES)
        .join(' ⏎ ');
      void vscode.window
        .showErrorMessage(
          `Rehearsal: training run ${run.name} failed: ${outcome.error?.code}: ${outcome.error?.message}${tail ? ` Log tail: ${tail}` : ''}`,
          'Resume',
          'Show Log',
        )
        .then((a) => {
          if (a === 'Resume') this.attention.fire({ run, action: 'resume' });
          if (a === 'Show Log') this.log.show(true);
        });
    }
    this.ended.fire(run);
    return outcome;
  }

  /** After a done run: its exported model offered (the lifecycle exported it if the trainer did not), or why the export failed. */
  private offerModel(run: TrainingRun, result: TrainingRunResult): void {
    const final = result.outcome.final;
    if (!final) return;
    if (result.exportError !== undefined) {
      run.afterRun = { phase: 'failed', message: result.exportError };
      run.touch();
      void vscode.window
        .showErrorMessage(
          `Rehearsal: the export of ${final} failed: ${result.exportError}`,
          'Show Log',
        )
        .then((a) => {
          if (a) this.log.show(true);
        });
      return;
    }
    run.model = final;
    run.afterRun = { phase: 'exported' };
    run.touch();
    void vscode.window
      .showInformationMessage(
        `Rehearsal: training run ${run.name} is done; its model is ${final}.`,
        'Use as Policy',
        'Compare Fidelity…',
      )
      .then((a) => {
        if (a === 'Use as Policy') this.attention.fire({ run, action: 'usePolicy' });
        if (a === 'Compare Fidelity…') this.attention.fire({ run, action: 'compare' });
      });
  }
}

/** A launch that could not start; a run file whose rows are not there yet offers to export them. */
function showLaunchError(err: unknown, prefix = '', runFile?: string): void {
  // The run's rows file is not there yet: the usual first step in a workspace is to export it.
  const rows =
    err instanceof StudioError && err.code === 'RUN_SPEC_PATHS_MISSING'
      ? (err.details?.['rows'] as string[] | undefined)?.[0]
      : undefined;
  const actions: ErrorAction[] = [];
  if (rows)
    actions.push({
      label: 'Export Training Rows',
      run: () => executeCommand('rehearsal.exportTrainingRows', exportTargetFor(rows, runFile)),
    });
  if (rows && runFile)
    actions.push({
      label: 'Open Run File',
      run: () => vscode.window.showTextDocument(vscode.Uri.file(runFile)),
    });
  showError(err, { prefix, actions });
}

/**
 * What Export Training Rows is given to write a run's missing rows file: `x.train.jsonl` is the
 * train half of exporting `x.jsonl` split by task (the held-out half beside it); any other name is
 * written whole. The run file is offered again once the rows are there.
 */
function exportTargetFor(
  rows: string,
  runFile: string | undefined,
): { out: string; splitByTask?: number; thenTrain?: string } {
  const split = /\.train\.jsonl$/i.test(rows);
  return {
    out: split ? rows.replace(/\.train\.jsonl$/i, '.jsonl') : rows,
    ...(split ? {} : { splitByTask: 0 }),
    ...(runFile ? { thenTrain: runFile } : {}),
  };
}
