// Intervals and paired differences over held-out tasks: bootstrap (2,000 resamples, seeded), so the
// figures are the same on every run.

/** One evaluation run: per-task outcomes and the report's figures. */
export interface Evaluation {
  trace: string;
  tasks: { task: string; success: number; reward: number }[];
  fieldF1: number[];
  keyJaccard: number | null;
  rehearsalValidity: number | null;
  actValidity: number | null;
}

/** A mean and its 95% bootstrap interval over `n` units. */
export interface Interval {
  mean: number;
  low: number;
  high: number;
  n: number;
}

/** A paired difference `a - b` of a metric over tasks. */
export interface Difference {
  name: string;
  metric: 'success' | 'reward';
  mean: number;
  ci95: [number, number];
  tasks: number;
}

/** Seeded PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const average = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Mean and 95% bootstrap interval of per-unit values (each unit: the mean of its list of values). */
export function interval(units: readonly (readonly number[])[]): Interval {
  const means = units.map(average);
  const mean = means.reduce((a, b) => a + b, 0) / Math.max(1, means.length);
  if (means.length < 2) return { mean, low: mean, high: mean, n: means.length };
  const random = prng(1);
  const draws: number[] = [];
  for (let b = 0; b < 2000; b++) {
    let s = 0;
    for (let i = 0; i < means.length; i++) s += means[Math.floor(random() * means.length)];
    draws.push(s / means.length);
  }
  draws.sort((x, y) => x - y);
  return { mean, low: draws[49], high: draws[1949], n: means.length };
}

/** Each task's values of `field` over the evaluations given (seeds). */
function valuesByTask(evaluations: readonly Evaluation[], field: 'success' | 'reward') {
  const m = new Map<string, number[]>();
  for (const e of evaluations)
    for (const t of e.tasks) m.set(t.task, [...(m.get(t.task) ?? []), t[field]]);
  return m;
}

/** Each task's value of `field`, averaged over the evaluations given (seeds). */
export function perTask(evaluations: readonly Evaluation[], field: 'success' | 'reward') {
  return new Map([...valuesByTask(evaluations, field)].map(([task, v]) => [task, average(v)]));
}

/**
 * A paired difference `a - b` of `metric` over the held-out tasks both arms played: each task's
 * difference of its seed-averaged values, its mean, and a 95% bootstrap interval over tasks.
 */
export function difference(
  name: string,
  metric: 'success' | 'reward',
  a: readonly Evaluation[],
  b: readonly Evaluation[],
): Difference {
  const pa = perTask(a, metric);
  const pb = perTask(b, metric);
  const diffs = [...pa.keys()].filter((t) => pb.has(t)).map((t) => [pa.get(t)! - pb.get(t)!]);
  const d = interval(diffs);
  return { name, metric, mean: d.mean, ci95: [d.low, d.high], tasks: d.n };
}

/** An arm's figures over held-out tasks (success and reward: each task averaged over seeds). */
export interface Summary {
  success: Interval;
  reward: Interval;
  fieldF1: Interval | null;
  keyJaccard: number | null;
  rehearsalValidity: number | null;
  actValidity: number | null;
}

/** The mean of the values that are there, or null. */
function meanOf(xs: readonly (number | null)[]): number | null {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? average(v) : null;
}

/** Success and reward over held-out tasks, each task's value averaged over the evaluations (seeds). */
export function summarise(evaluations: readonly Evaluation[]): Summary {
  const f1 = evaluations.flatMap((e) => e.fieldF1.map((x) => [x]));
  return {
    success: interval([...valuesByTask(evaluations, 'success').values()]),
    reward: interval([...valuesByTask(evaluations, 'reward').values()]),
    fieldF1: f1.length ? interval(f1) : null,
    keyJaccard: meanOf(evaluations.map((e) => e.keyJaccard)),
    rehearsalValidity: meanOf(evaluations.map((e) => e.rehearsalValidity)),
    actValidity: meanOf(evaluations.map((e) => e.actValidity)),
  };
}

/** 1-based ranks of `xs`; tied values share the mean of their ranks. */
export function ranks(xs: readonly number[]): number[] {
  const order = xs.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(xs.length);
  for (let start = 0; start < order.length;) {
    let end = start + 1;
    while (end < order.length && order[end][0] === order[start][0]) end++;
    const rank = (start + 1 + end) / 2; // the mean of ranks start+1 .. end
    for (let k = start; k < end; k++) out[order[k][1]] = rank;
    start = end;
  }
  return out;
}

/**
 * Spearman's rank correlation of paired values: Pearson's r of their ranks (ties share mean ranks).
 * Null with fewer than two pairs, or when either side has one value throughout (no ranking).
 */
export function spearman(a: readonly number[], b: readonly number[]): number | null {
  if (a.length !== b.length) throw new Error(`spearman: ${a.length} values against ${b.length}`);
  if (a.length < 2) return null;
  const ra = ranks(a);
  const rb = ranks(b);
  const ma = average(ra);
  const mb = average(rb);
  let cov = 0;
  let va = 0;
  let vb = 0;
  for (let i = 0; i < ra.length; i++) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) ** 2;
    vb += (rb[i] - mb) ** 2;
  }
  return va === 0 || vb === 0 ? null : cov / Math.sqrt(va * vb);
}

/** Whether `x` is a finite number in [low, high]. */
export const within = (x: unknown, low: number, high: number): x is number =>
  typeof x === 'number' && Number.isFinite(x) && x >= low && x <= high;

/** Whether `x` is a whole number, 0 or more. */
export const isCount = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0;

/** Whether a difference read from an effects file has its form: a mean and interval in range, tasks. */
export function wellFormedDifference(d: Difference | undefined): boolean {
  return (
    !!d &&
    within(d.mean, -1, 1) &&
    Array.isArray(d.ci95) &&
    within(d.ci95[0], -1, 1) &&
    within(d.ci95[1], d.ci95[0], 1) &&
    isCount(d.tasks) &&
    d.tasks > 0
  );
}
