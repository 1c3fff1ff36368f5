/**
 * The benchmark registry: each file under `bench/cases/` registers its cases here when imported, so
 * a later feature adds a benchmark by adding a file.
 */

/** Timing statistics of one measured operation, in milliseconds. */
export interface TimingStats {
  runs: number;
  medianMs: number;
  p95Ms: number;
  minMs: number;
  maxMs: number;
}

/** A goal for one measurement: its median (or p95) must stay below `belowMs`. */
export interface TimeTarget {
  measurement: string;
  stat: 'medianMs' | 'p95Ms';
  belowMs: number;
}

/**
 * A goal for a ratio the case reports as a fact (two timings of the same machine, or two counts): at
 * most `atMost` (a cost) or at least `atLeast` (a speed-up).
 */
export type RatioTarget = { fact: string } & ({ atMost: number } | { atLeast: number });

/** A goal of a case. */
export type BenchTarget = TimeTarget | RatioTarget;

/** What a case returns: named timings, plus facts about its input (sizes, counts) for the record. */
export interface BenchCaseResult {
  measurements: Record<string, TimingStats>;
  /** Measurement that the others are shown as a ratio of (the same machine's speed at a known task). */
  baseline?: string;
  facts?: Record<string, number | string>;
}

/** Settings every case receives. */
export interface BenchSettings {
  /** Untimed runs before measuring. */
  warmup: number;
  /** Timed runs. */
  runs: number;
  /** `--tiny`: every case at a size that runs in seconds, to prove it still runs (no timing kept). */
  tiny?: boolean;
}

/** The environment variable `npm run bench -- --tiny` sets before the cases are imported. */
export const BENCH_TINY_ENV = 'BENCH_TINY';

/**
 * A case's size: `full` for a measurement, `tiny` under `--tiny` (CI runs every case that way, so
 * nothing that ships rots unseen). Read when a case's file is imported, so names can say the size.
 */
export function benchSize<T>(full: T, tiny: T): T {
  return process.env[BENCH_TINY_ENV] === '1' ? tiny : full;
}

/** One benchmark case. */
export interface BenchCase {
  name: string;
  description: string;
  run(settings: BenchSettings): Promise<BenchCaseResult> | BenchCaseResult;
  targets?: BenchTarget[];
}

const cases: BenchCase[] = [];

/** Registers a case (called at import time by the files under `bench/cases/`). */
export function registerBenchCase(c: BenchCase): void {
  if (cases.some((x) => x.name === c.name))
    throw new Error(`benchmark case ${c.name} is registered twice`);
  cases.push(c);
}

/** The registered cases, in registration order. */
export function benchCases(): readonly BenchCase[] {
  return cases;
}

/** The value at quantile `q` (0..1) of sorted numbers, nearest-rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

/** Statistics of timings (milliseconds) collected by a case itself. */
export function timingStats(samples: readonly number[]): TimingStats {
  const times = [...samples].sort((a, b) => a - b);
  return {
    runs: times.length,
    medianMs: quantile(times, 0.5),
    p95Ms: quantile(times, 0.95),
    minMs: times[0],
    maxMs: times[times.length - 1],
  };
}

/** Times `fn`: `warmup` untimed runs, then `runs` timed ones. */
export async function measure(fn: () => unknown, settings: BenchSettings): Promise<TimingStats> {
  for (let i = 0; i < settings.warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < settings.runs; i++) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return timingStats(times);
}
