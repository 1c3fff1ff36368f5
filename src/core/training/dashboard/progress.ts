/**
 * Progress of a training run and its estimated time to go, from the times (`t`, seconds since the
 * trainer started) at which units of work (steps, or GRPO iterations) were done.
 */

/** One unit of work done at a time: `done` units after `t` seconds of the process. */
export interface ProgressSample {
  done: number;
  t: number;
}

/** How many recent samples the rate is measured over: recent enough to follow a change of speed. */
export const ETA_WINDOW = 20;

/**
 * Seconds left until `total` units are done, at the pace of `samples` (oldest first, one process:
 * `t` restarts with each process). The pace is measured between the first and the last sample; with
 * a single sample, from `origin` (where this process started: the step it resumed at, and the time
 * of its `start` event), so that start-up time is not counted. Null when there is no pace yet.
 */
export function estimateSecondsLeft(
  samples: readonly ProgressSample[],
  total: number | null,
  origin?: ProgressSample,
): number | null {
  const last = samples.at(-1);
  if (!last || total === null) return null;
  if (last.done >= total) return 0;
  const first = samples.length > 1 ? samples[0] : origin;
  if (!first || last.done <= first.done || last.t < first.t) return null;
  const secondsPerUnit = (last.t - first.t) / (last.done - first.done);
  return Math.max(0, (total - last.done) * secondsPerUnit);
}

/** A duration as a person reads it: `45 s`, `3 min 05 s`, `2 h 07 min`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}
