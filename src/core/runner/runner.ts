import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError, errorMessage } from '../base/errors';
import { SharedEnvironments } from '../env/sharedEnvironments';
import type { Environment } from '../env/types';
import type { GradeOptions } from '../tasks/checks/grade';
import type { LoadedTask } from '../tasks/format/taskFile';
import type { OpenUser } from '../tasks/taskUser';
import type { Policy } from '../policy/types';
import { mixSeed } from '../base/random';
import { assertValidId, episodeId as makeEpisodeId, newRunId } from '../trace/format/ids';
import { TRACE_FILE } from '../trace/format/discover';
import type { NewTraceEvent, TraceEvent, UserPlayer } from '../trace/format/schema';
import { SNAPSHOT_MIN_BYTES, snapshotAllowed } from '../trace/index/indexSnapshot';
import { TraceIndex } from '../trace/index/traceIndex';
import { TraceWriter } from '../trace/format/writer';
import type { EmitEvent, EpisodeOutcome, EpisodeProgress } from './episode';
import { playEpisode } from './episode';
import { forEachConcurrent, MAX_CONCURRENCY } from './concurrency';
import { playPrivateRehearsal } from './privateRehearsal';
import type { RunSettings } from './settings';
import { withDefaults } from './settings';
import { writeRootOf } from '../base/writePath';

declare const STUDIO_VERSION: string | undefined;

/** Progress of a run, for progress bars. */
export interface RunProgress {
  /** Episodes finished / planned (committed episodes only in private rehearsal). */
  done: number;
  total: number;
  taskId: string;
  episode?: EpisodeProgress;
  /** Set when an episode just ended. */
  ended?: { episodeId: string; status: string; reward: number | null; success: boolean | null };
  /** Episodes being played right now (at most the run's concurrency); absent in replays. */
  inFlight?: number;
}

/** What a run needs. */
export interface RunOptions {
  /** Where runs are stored: `<workspace>/.rehearsal/runs`. */
  runsDir: string;
  runId?: string;
  tasks: LoadedTask[];
  policy: Policy;
  /** Opens the environment of a task (its servers); environments are reused across a task's episodes. */
  openEnvironment: (task: LoadedTask) => Promise<Environment>;
  settings?: Partial<RunSettings>;
  /**
   * Episodes in flight at once (default 1). Each episode in flight holds an environment of its own
   * (servers keep state); the trace's events of different episodes interleave, and the episodes' ids,
   * seeds and results are the same whatever the number (see runner/concurrency.ts for the defaults
   * by policy).
   */
  concurrency?: number;
  grade?: GradeOptions;
  /** Opens a task's user in the loop (`task.user`); default: scripts only (EpisodeContext.openUser). */
  openUser?: OpenUser;
  /** Who plays the tasks' simulated users, recorded in the run's first event. */
  user?: UserPlayer;
  signal?: AbortSignal;
  onProgress?: (p: RunProgress) => void;
  /** Every event, as it is written. */
  onEvent?: (e: TraceEvent) => void;
  /**
   * A trace at least this long (bytes; default 16 MiB) gets the explorer's index saved beside it
   * when the run ends (`trace.index`), so that its first open reads that instead of every line.
   */
  saveIndexAfterBytes?: number;
}

/** One finished episode, as the run's summary lists it. */
export interface EpisodeSummary {
  episodeId: string;
  taskId: string;
  status: string;
  reward: number | null;
  success: boolean | null;
}

/** A finished run. */
export interface RunSummary {
  runId: string;
  traceFile: string;
  status: 'completed' | 'failed' | 'cancelled';
  episodes: EpisodeSummary[];
  error?: { code: string; message: string };
}

/**
 * Runs tasks with a policy in a mode (shadow, imagine with optional audit, private rehearsal), writing
 * every event to `<runsDir>/<runId>/trace.jsonl` as it happens. A policy that dies ends the run with a
 * coded error; the trace stays readable.
 */
export async function runTasks(options: RunOptions): Promise<RunSummary> {
  const settings = withDefaults(options.settings ?? {});
  const mode = playableMode(options, settings);
  const runId = options.runId ?? newRunId(settings.mode);
  const traceFile = path.join(options.runsDir, runId, TRACE_FILE);
  const writer = await TraceWriter.open(traceFile, { root: writeRootOf(options.runsDir) });
  // A trace that can no longer be written (a full disk) stops the episodes in flight at once: nothing
  // they did from then on could be kept.
  const traceLost = new AbortController();
  const signal = options.signal
    ? AbortSignal.any([options.signal, traceLost.signal])
    : traceLost.signal;
  const emit = async (event: NewTraceEvent): Promise<TraceEvent> => {
    const full = { v: 1, ts: new Date().toISOString(), ...event } as TraceEvent;
    try {
      await writer.append(full);
    } catch (err) {
      if (writer.writeFailure) traceLost.abort(writer.writeFailure);
      throw err;
    }
    options.onEvent?.(full);
    return full;
  };
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 1, MAX_CONCURRENCY));
  // Tasks that name the same servers share environments (reset per episode), not one process each;
  // every episode in flight holds one of its own.
  const run: TaskRun = {
    options,
    settings,
    mode,
    emit,
    signal,
    concurrency,
    environments: new SharedEnvironments<Environment>(concurrency),
    played: [],
    done: 0,
    inFlight: 0,
    total: options.tasks.length * settings.episodesPerTask,
  };

  const ended = await playRun(run, runId);
  // In the plan's order (task by task), whatever order they ended in.
  const episodes = run.played.filter((e): e is EpisodeSummary => e !== undefined);
  const lost = writer.writeFailure;
  if (lost) {
    // The run's end cannot be written either: the trace ends at its last whole event.
    await writer.close();
    const error = { code: lost.code, message: lost.message };
    return { runId, traceFile, status: 'failed', episodes, error };
  }
  const { status, error: runError } = ended;
  try {
    await emit({ type: 'run.end', runId, status, ...(runError ? { error: runError } : {}) });
  } finally {
    await writer.close();
  }
  await saveIndex(traceFile, options.saveIndexAfterBytes ?? SNAPSHOT_MIN_BYTES);
  return { runId, traceFile, status, episodes, ...(runError ? { error: runError } : {}) };
}

/**
 * The run's mode, once the options can play it: a valid run id, not a replay, and a policy that
 * rehearses unless the mode is shadow.
 */
function playableMode(options: RunOptions, settings: RunSettings): TaskRun['mode'] {
  // The id names the run's folder: one that could leave the runs folder is refused before anything else.
  if (options.runId !== undefined) assertValidId(options.runId, 'run');
  if (settings.mode === 'replay')
    throw new StudioError('USAGE', 'Replay runs re-rehearse a recorded trace: use replayTrace.');
  if (options.policy.rehearses === false && settings.mode !== 'shadow') {
    throw new StudioError(
      'USAGE',
      `The ${options.policy.info.kind} policy does not rehearse, so it cannot play ${settings.mode} episodes (they go on with rehearsed responses); use shadow mode, or a model folder or endpoint policy.`,
    );
  }
  return settings.mode;
}

/**
 * Records the run's start and plays its tasks; a fault becomes a failed ending. The environments are
 * closed whatever happened.
 */
async function playRun(run: TaskRun, runId: string): Promise<RunEnding> {
  const { options, settings } = run;
  try {
    await run.emit({
      type: 'run',
      runId,
      mode: settings.mode,
      policy: options.policy.info,
      tasks: options.tasks.map((t) => t.task.id),
      settings: settings as unknown as Record<string, never>,
      ...(options.user ? { user: options.user } : {}),
      studioVersion: typeof STUDIO_VERSION === 'string' ? STUDIO_VERSION : 'dev',
    });
    return await playTasks(run);
  } catch (err) {
    return {
      status: 'failed',
      error: {
        code: err instanceof StudioError ? err.code : 'RUN_FAILED',
        message: errorMessage(err),
      },
    };
  } finally {
    await run.environments.closeAll();
  }
}

/** A run in progress: its options, its environments by servers, and the episodes played so far. */
interface TaskRun {
  options: RunOptions;
  settings: RunSettings;
  /** The run's mode (never replay: replayTrace plays those). */
  mode: Exclude<RunSettings['mode'], 'replay'>;
  emit: EmitEvent;
  /** The run's signal: stopped by the caller, or by a trace that can no longer be written. */
  signal: AbortSignal;
  concurrency: number;
  /** Environments by servers, shared by the episodes in flight, one held by each. */
  environments: SharedEnvironments<Environment>;
  /** Summaries by the episode's place in the plan. */
  played: (EpisodeSummary | undefined)[];
  done: number;
  inFlight: number;
  total: number;
  /** The first episode whose policy is gone (or the run stopped): no episode starts after it. */
  fatal?: EpisodeOutcome;
}

/** How the run ended: its status and, when it failed, why. */
interface RunEnding {
  status: RunSummary['status'];
  error?: { code: string; message: string };
}

/** One episode of the plan: a task's k-th, at place `place` of the run (tasks in order, then k). */
interface PlannedEpisode {
  loaded: LoadedTask;
  k: number;
  place: number;
}

/**
 * Plays every task's episodes, `concurrency` at a time, starting them in the plan's order; stops
 * starting new ones when the run is stopped or the policy is gone (those in flight end on their own,
 * each with its coded error).
 */
async function playTasks(run: TaskRun): Promise<RunEnding> {
  const { options, settings } = run;
  const plan: PlannedEpisode[] = [];
  for (const loaded of options.tasks)
    for (let k = 0; k < settings.episodesPerTask; k++) plan.push({ loaded, k, place: plan.length });
  await forEachConcurrent(
    plan,
    run.concurrency,
    async (planned, index) => {
      run.inFlight++;
      prefetchAhead(run, plan, index);
      let played: { summary: EpisodeSummary; outcome: EpisodeOutcome };
      try {
        played = await playTaskEpisode(run, planned);
      } finally {
        run.inFlight--;
      }
      const { summary, outcome } = played;
      run.played[planned.place] = summary;
      run.done++;
      if (outcome.fatal) run.fatal ??= outcome;
      options.onProgress?.({
        done: run.done,
        total: run.total,
        taskId: planned.loaded.task.id,
        ended: summary,
        inFlight: run.inFlight,
      });
    },
    () => run.signal.aborted || run.fatal !== undefined,
  );
  if (options.signal?.aborted) return { status: 'cancelled' };
  if (run.fatal) return { status: 'failed', error: run.fatal.error };
  return { status: 'completed' };
}

/**
 * The index of a planned episode's first episode id: its place, or in private rehearsal its place
 * times the episodes a task's rehearsal writes (the imagined ones and the committed one), so that
 * ids do not depend on which episodes ran at the same time.
 */
function firstIndexOf(run: TaskRun, place: number): number {
  return run.mode === 'private' ? place * (run.settings.privateRehearsal.budget + 1) : place;
}

/**
 * Starts the servers of the episode `concurrency` places ahead of the one starting now (the next to
 * begin once one in flight ends), when the episodes up to it need more environments of its servers
 * than the run has: at a change of servers (retail tasks, then bank; every task of bfcl or τ²) they
 * start while the episodes in flight wait on their policy, not when the episode begins.
 */
function prefetchAhead(run: TaskRun, plan: readonly PlannedEpisode[], index: number): void {
  const ahead = plan[index + run.concurrency];
  if (!ahead || run.signal.aborted) return;
  const key = environmentKey(ahead.loaded);
  const needed = plan
    .slice(index + 1, index + run.concurrency + 1)
    .filter((p) => environmentKey(p.loaded) === key).length;
  if (run.environments.count(key) >= needed) return;
  run.environments.prefetch(
    key,
    () => run.options.openEnvironment(ahead.loaded),
    (env) => env.startEpisode(),
  );
}

/** Plays a planned episode (a private rehearsal's committed one, in private mode) on an environment of its own. */
async function playTaskEpisode(
  run: TaskRun,
  planned: PlannedEpisode,
): Promise<{ summary: EpisodeSummary; outcome: EpisodeOutcome }> {
  // Every mode needs the environment: its servers list the task's tools. Imagine mode (without
  // audit) calls none of them.
  const env = await run.environments.acquire(environmentKey(planned.loaded), () =>
    run.options.openEnvironment(planned.loaded),
  );
  try {
    return await playOn(run, planned, env);
  } finally {
    run.environments.release(env);
  }
}

/** Plays a planned episode on `env`, which it holds. */
async function playOn(
  run: TaskRun,
  { loaded, k, place }: PlannedEpisode,
  env: Environment,
): Promise<{ summary: EpisodeSummary; outcome: EpisodeOutcome }> {
  const { options, settings, emit } = run;
  const onEpisodeProgress = (p: EpisodeProgress) =>
    options.onProgress?.({
      done: run.done,
      total: run.total,
      taskId: loaded.task.id,
      episode: p,
      inFlight: run.inFlight,
    });
  const episodeSettings = withEpisodeSeed(settings, loaded.task.id, k);
  const firstIndex = firstIndexOf(run, place);
  let outcome: EpisodeOutcome;
  let id: string;
  if (run.mode === 'private') {
    const played = await playPrivateRehearsal({
      task: loaded.task,
      firstIndex,
      policy: options.policy,
      env,
      settings: episodeSettings,
      emit,
      grade: { ...options.grade, baseDir: loaded.baseDir },
      openUser: options.openUser,
      signal: run.signal,
      onProgress: onEpisodeProgress,
    });
    outcome = played.committed;
    id = played.committedId;
  } else {
    id = makeEpisodeId(firstIndex);
    outcome = await playEpisode({
      task: loaded.task,
      episodeId: id,
      index: firstIndex,
      mode: run.mode,
      policy: options.policy,
      env,
      settings: episodeSettings,
      emit,
      grade: { ...options.grade, baseDir: loaded.baseDir },
      openUser: options.openUser,
      signal: run.signal,
      onProgress: onEpisodeProgress,
    });
  }
  const summary = {
    episodeId: id,
    taskId: loaded.task.id,
    status: outcome.status,
    reward: outcome.grade?.reward ?? null,
    success: outcome.grade?.success ?? null,
  };
  return { summary, outcome };
}

/** Tasks with the same servers, tools and call timeout share one environment. */
function environmentKey(t: LoadedTask): string {
  return JSON.stringify([
    t.baseDir,
    t.task.servers,
    t.task.tools ?? null,
    t.task.limits?.callTimeoutMs ?? null,
  ]);
}

/**
 * Indexes a finished run's trace and saves the index beside it, when the trace is long enough to be
 * worth it. Best effort: the run is recorded whatever happens here (the explorer indexes the trace
 * itself when no saved index is there).
 */
async function saveIndex(traceFile: string, minBytes: number): Promise<void> {
  if (!snapshotAllowed(traceFile)) return;
  try {
    const { size } = await fs.stat(traceFile);
    if (size >= minBytes) await TraceIndex.open(traceFile, { saveAfterBytes: minBytes });
  } catch {
    // The index is a cache; its absence costs a slower first open, never a run.
  }
}

/**
 * The settings of a task's episode `k` (0-based): the k-th episode of a task samples with seeds
 * derived from the run's seeds, the task and k (acts and rehearsals each their own stream), so that
 * the episodes of one task (a GRPO group) differ when they sample, as do those of tasks with the same
 * prompt; the first episode keeps the run's seeds, and greedy episodes are the same whatever their seed.
 */
export function withEpisodeSeed(settings: RunSettings, taskId: string, k: number): RunSettings {
  if (k === 0) return settings;
  const { act, rehearse } = settings.sampling;
  return {
    ...settings,
    sampling: {
      act: { ...act, seed: mixSeed(act.seed ?? 0, 'act', taskId, k) },
      rehearse: { ...rehearse, seed: mixSeed(rehearse.seed ?? 0, 'rehearse', taskId, k) },
    },
  };
}
