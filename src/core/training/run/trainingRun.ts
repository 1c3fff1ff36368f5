import { promises as fs, unwatchFile, watchFile } from 'node:fs';
import * as path from 'node:path';
import { Disposable } from '../../base/disposable';
import { Emitter } from '../../base/event';
import type { TrainingDashboardSnapshot } from '../dashboard/protocol';
import { stateForDashboard } from '../dashboard/protocol';
import type { TrainingRunState } from '../dashboard/runState';
import { applyOutcome, applyTrainerEvent, emptyRunState } from '../dashboard/runState';
import { isExported } from '../launch/backends';
import type { TrainingBackend } from '../launch/launchPlan';
import type { LaunchRecord } from '../launch/launchRecord';
import { LAUNCH_RECORD } from '../launch/launchRecord';
import type { TrainerEvent, TrainingOutcome, TrainingProcess } from '../launch/supervisor';
import { EVENTS_FILE, readTrainerEvents } from '../launch/supervisor';

/**
 * One training run folder as the editor knows it: its state folded from the trainer's events (live
 * from a process this editor started, or read back from events.jsonl), the process if attached, and
 * what happened after the run (the ONNX export of its final model).
 */
export class TrainingRun extends Disposable {
  state: TrainingRunState = emptyRunState();
  runFile?: string;
  backend: TrainingBackend = 'local';
  command?: string;
  process?: TrainingProcess;
  /** The exported model folder, once done and exported: what "Use as policy" selects. */
  model?: string;
  afterRun?: TrainingDashboardSnapshot['afterRun'];
  logTail?: string;
  /** The base model of the run file (the policy a comparison starts from). */
  base?: string;
  /** Resolves when the attached process (and the export after it) has finished. */
  finished: Promise<TrainingOutcome | undefined> = Promise.resolve(undefined);
  private readonly changed = this._register(new Emitter<void>());
  /** Fires whenever the state changes. */
  readonly onDidChange = this.changed.event;
  private offset = 0;
  private following = false;

  constructor(readonly outDir: string) {
    super();
    this._register({ dispose: () => this.unfollow() });
  }

  /** The run's name: its folder's. */
  get name(): string {
    return path.basename(this.outDir);
  }

  /** A process started by this editor is running it. */
  get attached(): boolean {
    return this.process !== undefined;
  }

  /** Folds an event in and tells the dashboard. */
  apply(e: TrainerEvent): void {
    applyTrainerEvent(this.state, e);
    this.changed.fire();
  }

  /** Tells the dashboard that something besides an event changed. */
  touch(): void {
    this.changed.fire();
  }

  /** Replots from the run folder: events.jsonl, the launch record, the export. */
  async load(): Promise<void> {
    const { events, next } = await readTrainerEvents(this.outDir);
    this.state = emptyRunState();
    for (const e of events) applyTrainerEvent(this.state, e);
    this.offset = next;
    try {
      const record = JSON.parse(
        await fs.readFile(path.join(this.outDir, LAUNCH_RECORD), 'utf8'),
      ) as LaunchRecord;
      this.runFile = record.runFile;
      this.backend = record.backend;
      this.command = record.command;
    } catch {
      /* not launched from the editor: no Resume without picking the run file */
    }
    if (this.state.status === 'done' && this.state.final && isExported(this.state.final)) {
      this.model = this.state.final;
      this.afterRun = { phase: 'exported' };
    }
    this.touch();
  }

  /**
   * Follows events.jsonl while no process of this editor is attached: a run started elsewhere (or
   * before a restart) that is still writing keeps plotting.
   */
  follow(): void {
    if (this.following || this.attached || this.isDisposed) return;
    this.following = true;
    watchFile(path.join(this.outDir, EVENTS_FILE), { interval: 1000 }, () => void this.readMore());
  }

  private unfollow(): void {
    if (!this.following) return;
    this.following = false;
    unwatchFile(path.join(this.outDir, EVENTS_FILE));
  }

  private async readMore(): Promise<void> {
    if (this.attached) return;
    const { events, next } = await readTrainerEvents(this.outDir, this.offset);
    this.offset = next;
    for (const e of events) applyTrainerEvent(this.state, e);
    if (events.length) this.touch();
  }

  /** Starts watching a process of this editor: its events stream in through stdout. */
  attach(proc: TrainingProcess): void {
    this.unfollow();
    this.process = proc;
    this.state.status = 'waiting';
    this.state.error = undefined;
    this.logTail = undefined;
    this.afterRun = undefined;
    this._register(proc.onEvent((e) => this.apply(e)));
  }

  /** The process has ended: the supervisor's verdict, and where events.jsonl now ends. */
  async detach(outcome: TrainingOutcome): Promise<void> {
    this.process = undefined;
    applyOutcome(this.state, outcome);
    if (outcome.status === 'failed') this.logTail = outcome.stderrTail;
    this.offset = (await readTrainerEvents(this.outDir, this.offset)).next;
    this.touch();
  }

  /** The dashboard's whole snapshot. */
  snapshot(): TrainingDashboardSnapshot {
    const status = this.state.status;
    const ended = status === 'cancelled' || status === 'failed';
    return {
      name: this.name,
      outDir: this.outDir,
      ...(this.runFile ? { runFile: this.runFile } : {}),
      ...(this.command ? { command: this.command } : {}),
      attached: this.attached,
      state: stateForDashboard(this.state),
      ...(this.model ? { model: this.model } : {}),
      ...(this.afterRun ? { afterRun: this.afterRun } : {}),
      ...(this.logTail ? { logTail: this.logTail } : {}),
      actions: {
        cancel: this.attached,
        resume: !this.attached && ended,
        usePolicy: !!this.model && !this.attached,
        compare: !!this.model && !this.attached,
      },
    };
  }
}
