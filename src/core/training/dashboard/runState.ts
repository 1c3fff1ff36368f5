/**
 * What the training dashboard shows of a run, folded from the trainer's events
 * (docs/trainer-events.md) one at a time: the same whether they stream from a live process or are
 * read back from the run folder's events.jsonl after a restart.
 */
import type { TrainerEvent, TrainingOutcome } from '../launch/supervisor';
import type { ProgressSample } from './progress';
import { ETA_WINDOW, estimateSecondsLeft } from './progress';

/** The dashboard's charts, in the order it shows them. */
export const TRAINING_CHARTS = [
  'loss',
  'reward',
  'groundingNll',
  'validation',
  'tokensPerSecond',
] as const;

/** One chart of the dashboard. */
export type TrainingChartId = (typeof TRAINING_CHARTS)[number];

/** A point of a series: the step (x) and the value (y). */
export type SeriesPoint = [step: number, value: number];

/** Each chart's series, by name (a role, or the one measure the chart shows). */
export type TrainingSeries = Record<TrainingChartId, Record<string, SeriesPoint[]>>;

/** Where a run stands. `waiting`: nothing heard from the trainer yet. */
export type TrainingRunStatus = 'waiting' | 'running' | 'done' | 'cancelled' | 'failed';

/** How far a run is: steps for `sft`, iterations for `grpo`. */
export interface TrainingProgress {
  unit: 'steps' | 'iterations';
  done: number;
  /** Null until the trainer said how many. */
  total: number | null;
  /** Estimated seconds to go at the recent pace; null until there is a pace. */
  secondsLeft: number | null;
}

/** A complete checkpoint on disk (where a resume starts). */
export interface CheckpointInfo {
  step: number;
  path: string;
  /** `grpo`: iterations done. */
  iteration?: number;
}

/** The dashboard's model of one run. */
export interface TrainingRunState {
  /** The trainer command (`sft`, `grpo`). */
  command?: string;
  status: TrainingRunStatus;
  device?: string;
  /** The last optimizer step reported. */
  step: number;
  progress: TrainingProgress;
  series: TrainingSeries;
  lastCheckpoint?: CheckpointInfo;
  resumedFrom?: { step: number; path: string };
  /** What trains (the trainer's `model` event): whose model code, LoRA's rank, trainable parameters. */
  model?: { backend: string; loraRank: number; parameters: number; trainable: number };
  /** The trained model folder (`done.final`). */
  final?: string;
  /** ONNX folders written (`export` events), oldest first. */
  exports: string[];
  warnings: { code: string; message: string }[];
  error?: { code: string; message: string };
  /** Events folded in. */
  events: number;
  /** The pace of the current process: recent samples and where it started. */
  pace: { samples: ProgressSample[]; origin?: ProgressSample };
}

/** The series names of each chart for a value that has a single series. */
export const SINGLE_SERIES = {
  groundingNll: 'grounding NLL',
  tokensPerSecond: 'tokens/s',
} as const;

/** The series of the whole objective on the loss chart (beside one per role). */
export const OBJECTIVE_SERIES = 'objective';

/** A run before its first event. */
export function emptyRunState(): TrainingRunState {
  return {
    status: 'waiting',
    step: 0,
    progress: { unit: 'steps', done: 0, total: null, secondsLeft: null },
    series: { loss: {}, reward: {}, groundingNll: {}, validation: {}, tokensPerSecond: {} },
    exports: [],
    warnings: [],
    events: 0,
    pace: { samples: [] },
  };
}

const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined;

function plot(
  state: TrainingRunState,
  chart: TrainingChartId,
  name: string,
  step: number,
  value: unknown,
): void {
  const y = num(value);
  if (y === undefined) return;
  (state.series[chart][name] ??= []).push([step, y]);
}

/** A resumed process: the points after its checkpoint go (they are trained again). */
function onResume(state: TrainingRunState, e: TrainerEvent): void {
  const step = num(e['step']);
  if (step === undefined) return;
  state.resumedFrom = { step, path: String(e['path']) };
  state.step = step;
  truncateAfter(state, step);
  const iteration =
    state.lastCheckpoint?.step === step ? state.lastCheckpoint.iteration : undefined;
  const done = state.progress.unit === 'iterations' ? (iteration ?? state.progress.done) : step;
  state.progress.done = done;
  if (state.pace.origin) state.pace.origin.done = done;
}

/** `--backend trl`: TRL's logged numbers of a step (the act role's loss and the studio's reward). */
function onTrlStep(state: TrainingRunState, e: TrainerEvent): void {
  const step = num(e['step']);
  const logs = e['logs'] as Record<string, unknown> | undefined;
  if (step === undefined || !logs) return;
  state.step = step;
  state.progress.unit = 'steps';
  state.progress.total = num(e['steps']) ?? state.progress.total;
  plot(state, 'loss', 'act', step, logs['loss']);
  plot(state, 'reward', 'act', step, logs['reward']);
  recordPace(state, step, e['t']);
}

/** Drops every point after `step`: a resumed run replays the steps after its checkpoint. */
function truncateAfter(state: TrainingRunState, step: number): void {
  for (const chart of TRAINING_CHARTS) {
    for (const points of Object.values(state.series[chart])) {
      while (points.length && points[points.length - 1][0] > step) points.pop();
    }
  }
}

function recordPace(state: TrainingRunState, done: number, t: unknown): void {
  const time = num(t);
  state.progress.done = done;
  if (time !== undefined) {
    state.pace.samples.push({ done, t: time });
    if (state.pace.samples.length > ETA_WINDOW) state.pace.samples.shift();
  }
  state.progress.secondsLeft = estimateSecondsLeft(
    state.pace.samples,
    state.progress.total,
    state.pace.origin,
  );
}

function onStep(state: TrainingRunState, e: TrainerEvent): void {
  const step = num(e['step']);
  if (step === undefined) return;
  state.step = step;
  state.status = 'running';
  const grpo = (e['command'] ?? state.command) === 'grpo';
  const roles = (e['roles'] ?? {}) as Record<string, Record<string, unknown>>;
  for (const [role, r] of Object.entries(roles)) {
    plot(state, 'loss', role, step, grpo ? r['pg_loss'] : r['loss']);
    plot(state, 'reward', role, step, r['reward_mean']);
  }
  plot(state, 'loss', OBJECTIVE_SERIES, step, e['loss']);
  plot(state, 'tokensPerSecond', SINGLE_SERIES.tokensPerSecond, step, e['tokens_per_s']);
  const grounding = e['grounding'] as Record<string, unknown> | null | undefined;
  if (grounding) plot(state, 'groundingNll', SINGLE_SERIES.groundingNll, step, grounding['nll']);
  if (grpo) {
    state.progress.unit = 'iterations';
    state.progress.total = num(e['iterations']) ?? state.progress.total;
  } else {
    state.progress.total = num(e['steps']) ?? state.progress.total;
    recordPace(state, step, e['t']);
  }
}

/**
 * A validation point (grpo with `validation.command`, docs/trainer-events.md): one series per score
 * of the held-out tasks (`success`, `meanReward`, validity rates), at the step it was taken.
 */
function onValidation(state: TrainingRunState, e: TrainerEvent): void {
  const step = num(e['step']) ?? state.step;
  const scores = e['scores'];
  if (!scores || typeof scores !== 'object') return;
  for (const [name, value] of Object.entries(scores as Record<string, unknown>))
    plot(state, 'validation', name, step, value);
}

/** What an sft or grpo `model` event says trains (init's has no backend: undefined). */
function trainedModel(e: TrainerEvent): TrainingRunState['model'] {
  const c = e['config'] as Record<string, unknown> | undefined;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const parameters = n(e['parameters']);
  if (!c || typeof c['backend'] !== 'string' || parameters === undefined) return undefined;
  return {
    backend: c['backend'],
    loraRank: n(c['lora_rank']) ?? 0,
    parameters,
    trainable: n(c['trainable_parameters']) ?? parameters,
  };
}

/** Folds one trainer event into the state (in place, so that long runs stay linear). */
export function applyTrainerEvent(state: TrainingRunState, e: TrainerEvent): TrainingRunState {
  state.events++;
  switch (e.event) {
    case 'start':
      if (typeof e['command'] === 'string') state.command = e['command'];
      if (typeof e['device'] === 'string') state.device = e['device'];
      if (state.command === 'grpo') state.progress.unit = 'iterations';
      state.status = 'running';
      state.error = undefined;
      // A new process: its clock starts again, so the pace starts again from where it stands.
      state.pace = {
        samples: [],
        ...(num(e['t']) !== undefined
          ? { origin: { done: state.progress.done, t: e['t'] as number } }
          : {}),
      };
      break;
    case 'model':
      state.model = trainedModel(e) ?? state.model;
      break;
    case 'resume':
      onResume(state, e);
      break;
    case 'step':
      onStep(state, e);
      break;
    case 'trl_step':
      onTrlStep(state, e);
      break;
    case 'iteration': {
      const iteration = num(e['iteration']);
      if (iteration !== undefined) recordPace(state, iteration + 1, e['t']);
      break;
    }
    case 'validation':
      onValidation(state, e);
      break;
    case 'checkpoint': {
      const step = num(e['step']);
      if (step !== undefined)
        state.lastCheckpoint = {
          step,
          path: String(e['path']),
          ...(num(e['iteration']) !== undefined ? { iteration: e['iteration'] as number } : {}),
        };
      break;
    }
    case 'export':
      if (typeof e['path'] === 'string' && e['iteration'] === undefined)
        state.exports.push(e['path']);
      break;
    case 'warning':
      state.warnings.push({
        code: String(e['code'] ?? 'WARNING'),
        message: String(e['message'] ?? ''),
      });
      break;
    case 'error': {
      const code = String(e['code'] ?? 'INTERNAL');
      state.error = { code, message: String(e['message'] ?? '') };
      state.status = code === 'INTERRUPTED' ? 'cancelled' : 'failed';
      break;
    }
    case 'done':
      state.status = 'done';
      if (typeof e['final'] === 'string') state.final = e['final'];
      if (state.progress.total !== null) state.progress.done = state.progress.total;
      state.progress.secondsLeft = 0;
      break;
  }
  return state;
}

/** Folds a whole event list (a run folder's events.jsonl) into a fresh state. */
export function runStateFromEvents(events: Iterable<TrainerEvent>): TrainingRunState {
  const state = emptyRunState();
  for (const e of events) applyTrainerEvent(state, e);
  return state;
}

/**
 * Takes the supervisor's verdict once the process has exited: it knows what no event says (a crash
 * without an `error` event, a kill by a signal).
 */
export function applyOutcome(state: TrainingRunState, outcome: TrainingOutcome): TrainingRunState {
  state.status = outcome.status;
  if (outcome.status === 'done') {
    state.error = undefined;
    if (outcome.final) state.final = outcome.final;
  } else if (outcome.error) {
    state.error = outcome.error;
  }
  if (outcome.status !== 'done') state.progress.secondsLeft = null;
  return state;
}

/**
 * A series thinned to at most `max` points for drawing: the first point of each of `max - 1` equal
 * buckets, and always the last point (the newest value stays visible).
 */
export function thinSeries(points: readonly SeriesPoint[], max: number): SeriesPoint[] {
  if (points.length <= max) return [...points];
  const buckets = Math.max(1, max - 1);
  const size = points.length / buckets;
  const out: SeriesPoint[] = [];
  for (let b = 0; b < buckets; b++) out.push(points[Math.floor(b * size)]);
  if (out.at(-1) !== points.at(-1)) out.push(points[points.length - 1]);
  return out;
}
