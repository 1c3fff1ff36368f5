import type { ChildProcessByStdio } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { StudioError } from '../../base/errors';
import { Emitter } from '../../base/event';
import { LineSplitter } from '../../base/lines';
import type { Event } from '../../base/event';
import { writeFileInside, writeRootOf, writeStreamInside } from '../../base/writePath';
import { StderrLog } from '../../env/stderrLog';
import { readLines } from '../../trace/format/lineReader';
import type { LaunchPlan } from './launchPlan';
import { safeTimeout } from '../../base/timers';

/** The file of a run folder where the trainer appends every event (docs/trainer-events.md). */
export const EVENTS_FILE = 'events.jsonl';

/** The file of a run folder where the launcher appends the trainer's stderr. */
export const TRAINER_LOG = 'trainer.log';

/** One JSON event of the trainer's stdout (docs/trainer-events.md). */
export interface TrainerEvent {
  event: string;
  t?: number;
  [key: string]: unknown;
}

/** How a training process ended. */
export interface TrainingOutcome {
  status: 'done' | 'cancelled' | 'failed';
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Failed or cancelled: a coded error (the trainer's own `error` event when it wrote one). */
  error?: { code: string; message: string };
  /** The last lines of stderr (tracebacks, torchrun's messages). */
  stderrTail: string;
  /** The newest complete checkpoint seen, the one a re-launch resumes from. */
  lastCheckpoint?: { step: number; path: string };
  /** The trained model folder (`done.final`). */
  final?: string;
  /**
   * A transformers run's policy folder with ONNX (`done.policy`: its `final/` is a Hugging Face or
   * PEFT adapter folder, exported to `final-policy/` when the studio's code runs the architecture).
   */
  policy?: string;
  /** The run resumed from a checkpoint (`resume` event). */
  resumedFrom?: { step: number; path: string };
  events: number;
}

/** Options of {@link TrainingProcess.start}. */
export interface SuperviseOptions {
  /** Milliseconds between SIGINT and SIGTERM, and between SIGTERM and SIGKILL, when cancelling. */
  graceMs?: number;
  /** Appends the trainer's stderr to this file (the run folder's {@link TRAINER_LOG}). */
  logFile?: string;
}

/**
 * One trainer event from a line of its stdout or events file; undefined for anything else. Strips the
 * `[default0]:` prefix torchrun's `--tee` puts before each worker line.
 */
export function parseTrainerEventLine(line: string): TrainerEvent | undefined {
  const text = line.replace(/^\[[^\]]*\]:/, '').trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && typeof (value as TrainerEvent).event === 'string'
      ? (value as TrainerEvent)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A supervised trainer process: started from a {@link LaunchPlan} with an argument vector (never a
 * shell), in its own process group so that cancelling reaches every torchrun worker. Its JSONL
 * events stream through {@link onEvent}; stderr through {@link onLog} and into a tail kept for the
 * crash report. Cancel sends SIGINT (the trainer writes `error INTERRUPTED` and exits 130), then
 * SIGTERM and SIGKILL after a grace each.
 */
export class TrainingProcess {
  private readonly eventEmitter = new Emitter<TrainerEvent>();
  private readonly logEmitter = new Emitter<string>();
  /** Every trainer event, as it arrives. */
  readonly onEvent: Event<TrainerEvent> = this.eventEmitter.event;
  /** Every stderr line, as it arrives. */
  readonly onLog: Event<string> = this.logEmitter.event;
  /** Resolves when the process has exited and its output is read. */
  readonly done: Promise<TrainingOutcome>;

  private cancelled = false;
  private readonly timers: NodeJS.Timeout[] = [];

  private constructor(
    readonly plan: LaunchPlan,
    private readonly options: SuperviseOptions,
    private readonly child: ChildProcessByStdio<null, Readable, Readable>,
    private readonly log?: WriteStream,
  ) {
    this.done = this.supervise();
  }

  /** Writes the plan's trainer config and starts the process. */
  static async start(plan: LaunchPlan, options: SuperviseOptions = {}): Promise<TrainingProcess> {
    if (!plan.runsHere)
      throw new StudioError(
        'USAGE',
        `The ${plan.backend} backend is launched on its cluster; the studio only generates its command.`,
      );
    if (plan.configFile && plan.trainerConfig) {
      await writeFileInside(
        writeRootOf(plan.outDir),
        plan.configFile,
        JSON.stringify(plan.trainerConfig, null, 1) + '\n',
      );
    }
    if (!existsSync(plan.argv[0]) && path.isAbsolute(plan.argv[0])) {
      throw new StudioError(
        'TRAINER_PYTHON_MISSING',
        `${plan.argv[0]} does not exist: fix the Python named for the trainer (--python, rehearsal.trainer.python, hardware.python, $TRAINER_PYTHON), or drop it and run \`rehearse trainer setup\` to use the studio's environment.`,
      );
    }
    let log: WriteStream | undefined;
    if (options.logFile) {
      log = await writeStreamInside(
        writeRootOf(path.dirname(options.logFile)),
        options.logFile,
        'a',
      );
    }
    const child = spawn(plan.argv[0], plan.argv.slice(1), {
      cwd: plan.cwd,
      env: { ...process.env, ...plan.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    });
    return new TrainingProcess(plan, options, child, log);
  }

  /** The process id (of torchrun, for that backend). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Asks the trainer to stop (SIGINT), then insists (SIGTERM, SIGKILL) after the grace. */
  cancel(): void {
    if (this.cancelled || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.cancelled = true;
    const grace = this.options.graceMs ?? 10_000;
    this.signal('SIGINT');
    this.timers.push(
      safeTimeout(() => this.signal('SIGTERM'), grace),
      safeTimeout(() => this.signal('SIGKILL'), 2 * grace),
    );
  }

  private signal(sig: NodeJS.Signals): void {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    // The whole process group: torchrun's workers get the signal as from a terminal's Ctrl-C.
    try {
      process.kill(process.platform === 'win32' ? child.pid : -child.pid, sig);
    } catch {
      try {
        child.kill(sig);
      } catch {
        /* gone */
      }
    }
  }

  private supervise(): Promise<TrainingOutcome> {
    const child = this.child;
    const stderr = new StderrLog(
      (line) => {
        const text = line.replace(/^\[trainer\] /, '');
        this.log?.write(text + '\n');
        this.logEmitter.fire(text);
      },
      'trainer',
      60,
    );
    const outcome: TrainingOutcome = {
      status: 'failed',
      exitCode: null,
      signal: null,
      stderrTail: '',
      events: 0,
    };
    let lastError: { code: string; message: string } | undefined;
    let sawDone = false;
    const onEvent = (e: TrainerEvent) => {
      outcome.events++;
      if (e.event === 'checkpoint' && typeof e['step'] === 'number')
        outcome.lastCheckpoint = { step: e['step'], path: String(e['path']) };
      if (e.event === 'resume' && typeof e['step'] === 'number')
        outcome.resumedFrom = { step: e['step'], path: String(e['path']) };
      if (e.event === 'error')
        lastError = { code: String(e['code'] ?? 'INTERNAL'), message: String(e['message'] ?? '') };
      if (e.event === 'done') {
        sawDone = true;
        if (typeof e['final'] === 'string') outcome.final = e['final'];
        if (typeof e['policy'] === 'string') outcome.policy = e['policy'];
      }
      this.eventEmitter.fire(e);
    };
    const stdout = new LineSplitter((line) => {
      const e = parseTrainerEventLine(line);
      if (e) onEvent(e);
      else if (line.trim()) stderr.push(line + '\n');
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => stdout.push(chunk));
    stderr.follow(child.stderr);
    return new Promise<TrainingOutcome>((resolve) => {
      let spawnError: Error | undefined;
      child.on('error', (err) => {
        spawnError = err;
      });
      child.on('close', (code, signal) => {
        for (const t of this.timers) clearTimeout(t);
        const last = parseTrainerEventLine(stdout.rest);
        if (last) onEvent(last);
        stderr.flush();
        outcome.exitCode = code;
        outcome.signal = signal;
        outcome.stderrTail = stderr.tail(4000);
        judge(outcome, {
          program: this.plan.argv[0],
          spawnError,
          sawDone,
          cancelled: this.cancelled,
          lastError,
        });
        this.eventEmitter.dispose();
        this.logEmitter.dispose();
        if (this.log) this.log.end(() => resolve(outcome));
        else resolve(outcome);
      });
    });
  }
}

/** What the supervisor saw of an ended process, besides its exit code and signal. */
interface EndSeen {
  program: string;
  spawnError: Error | undefined;
  sawDone: boolean;
  cancelled: boolean;
  lastError: { code: string; message: string } | undefined;
}

/** Sets an ended process's status and error from its exit, its `done` event and its last `error`. */
function judge(outcome: TrainingOutcome, seen: EndSeen): void {
  const { exitCode: code, signal } = outcome;
  if (seen.spawnError) {
    outcome.error = {
      code: 'TRAINER_NOT_STARTED',
      message: `${seen.program} could not be started: ${seen.spawnError.message}`,
    };
  } else if (code === 0 && seen.sawDone) {
    outcome.status = 'done';
  } else if (seen.cancelled || code === 130 || seen.lastError?.code === 'INTERRUPTED') {
    outcome.status = 'cancelled';
    outcome.error = { code: 'INTERRUPTED', message: resumeHint(outcome) };
  } else {
    const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
    outcome.error = seen.lastError ?? {
      code: 'TRAINER_CRASHED',
      message: `The trainer ${how} without reporting an error; see the log tail.`,
    };
  }
}

function resumeHint(outcome: TrainingOutcome): string {
  return outcome.lastCheckpoint
    ? `Cancelled; the newest checkpoint is step ${outcome.lastCheckpoint.step}. Run the same command again to resume from it.`
    : 'Cancelled before the first checkpoint; running the same command again starts from the beginning.';
}

/** The newest complete checkpoint of a run folder (`checkpoints/latest`), if any: where a re-launch resumes. */
export async function latestCheckpoint(outDir: string): Promise<string | undefined> {
  try {
    const name = (await readFile(path.join(outDir, 'checkpoints', 'latest'), 'utf8')).trim();
    return name ? path.join(outDir, 'checkpoints', name) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The events of a run folder's {@link EVENTS_FILE} from byte `offset` on (0: all of them, oldest
 * first), and the offset to read from next time (it grows while the trainer writes). A last line
 * not yet terminated is left for the next read; lines that are not events are skipped. No file yet:
 * no events.
 */
export async function readTrainerEvents(
  outDir: string,
  offset = 0,
): Promise<{ events: TrainerEvent[]; next: number }> {
  const file = path.join(outDir, EVENTS_FILE);
  const events: TrainerEvent[] = [];
  let next = offset;
  if (!existsSync(file)) return { events, next };
  for await (const line of readLines(file, { start: offset })) {
    if (!line.terminated) break;
    next = line.offset + line.length + 1;
    const e = line.oversized ? undefined : parseTrainerEventLine(line.bytes.toString('utf8'));
    if (e) events.push(e);
  }
  return { events, next };
}
