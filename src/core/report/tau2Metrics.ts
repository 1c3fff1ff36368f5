import type { UserPlayer } from '../trace/format/schema';
import { gradedEpisodes } from './gradedEpisodes';

/** One τ² domain's figures, as τ²'s `compute_metrics` gives them (tau2.metrics.agent_metrics). */
export interface Tau2DomainMetrics {
  domain: string;
  /** Tasks with at least one graded episode. */
  tasks: number;
  /** Graded episodes (τ²'s trials). */
  trials: number;
  /** The mean of τ²'s reward over the trials, or null when none was graded. */
  averageReward: number | null;
  /** The fewest trials of a task: pass^k is given for k = 1 to this (τ²'s max_k). */
  maxK: number;
  /** pass^k for k = 1..maxK: the mean over tasks of C(successes, k) / C(trials, k). */
  passHatK: { k: number; value: number }[];
  /** Finished episodes whose `tau2` item was not evaluated (no Python environment, no judge), left out. */
  notEvaluated: number;
}

/** Who played the users of the graded episodes: an endpoint's model, or nobody. */
export interface Tau2UserPlayers {
  /** The episodes per model and endpoint that played τ²'s user simulator. */
  played: (UserPlayer & { episodes: number })[];
  /** Episodes of runs without a user endpoint: a scripted user or none played them. */
  unplayed: number;
}

/** `rehearse report --format tau2`: τ²'s average reward and pass^k per domain, and the user model. */
export interface Tau2Report {
  domains: Tau2DomainMetrics[];
  users: Tau2UserPlayers;
  /** Committed episodes of tasks without a `tau2` item, left out. */
  otherEpisodes: number;
}

/** τ²'s success: a reward within 1e-6 of 1 (`is_successful`). */
const successful = (reward: number) => Math.abs(reward - 1) <= 1e-6;

/**
 * pass^k of one task (τ²'s `pass_hat_k`, after Yao et al. 2024): the chance that k trials drawn
 * without replacement from `trials` all succeed, C(successes, k) / C(trials, k).
 */
export function passHatK(trials: number, successes: number, k: number): number {
  if (!Number.isInteger(k) || k < 1 || k > trials)
    throw new RangeError(`pass^k needs 1 ≤ k ≤ trials (${trials}), not ${k}`);
  let p = 1;
  for (let i = 0; i < k; i++) p *= Math.max(0, successes - i) / (trials - i);
  return p;
}

/** `tau2_retail_5` → `retail` (the importer's ids: trainer/tau2/importer.py `studio_id`). */
export function tau2Domain(taskId: string): string {
  return /^tau2_([^_]+)_/.exec(taskId)?.[1] ?? 'unknown';
}

/**
 * τ² figures of recorded runs: every committed episode of a task with a `tau2` item is one trial of
 * its task, with τ²'s reward (the item's score; 0 for an episode that ended on an error or a limit, as
 * τ² scores a premature termination) and success when that reward is 1. Per domain, as τ²'s
 * `compute_metrics`: the mean reward over trials, and pass^k for k up to the fewest trials of a task,
 * averaged over tasks.
 */
export async function buildTau2Report(files: readonly string[]): Promise<Tau2Report> {
  const { episodes, otherEpisodes } = await gradedEpisodes(files, 'tau2');
  const byDomain = new Map<string, { tasks: Map<string, number[]>; notEvaluated: number }>();
  const players = new Map<string, UserPlayer & { episodes: number }>();
  let unplayed = 0;
  for (const { taskId, status, item, run } of episodes) {
    const domain = tau2Domain(taskId);
    const d = byDomain.get(domain) ?? { tasks: new Map<string, number[]>(), notEvaluated: 0 };
    byDomain.set(domain, d);
    if (status === 'completed' && item.passed === null) {
      d.notEvaluated++;
      continue;
    }
    const reward = status !== 'completed' ? 0 : (item.score ?? (item.passed ? 1 : 0));
    d.tasks.set(taskId, [...(d.tasks.get(taskId) ?? []), reward]);
    if (!run?.user) unplayed++;
    else {
      const key = `${run.user.model}\n${run.user.endpoint}`;
      const p = players.get(key) ?? { ...run.user, episodes: 0 };
      p.episodes++;
      players.set(key, p);
    }
  }
  const domains = [...byDomain.entries()]
    .map(([domain, { tasks, notEvaluated }]) =>
      domainMetrics(domain, [...tasks.values()], notEvaluated),
    )
    .sort((a, b) => a.domain.localeCompare(b.domain));
  return { domains, users: { played: [...players.values()], unplayed }, otherEpisodes };
}

/** A domain's figures from its tasks' rewards (one array of trials per task). */
function domainMetrics(domain: string, tasks: number[][], notEvaluated: number): Tau2DomainMetrics {
  const rewards = tasks.flat();
  const maxK = tasks.length ? Math.min(...tasks.map((t) => t.length)) : 0;
  const passHat = [];
  for (let k = 1; k <= maxK; k++) {
    const perTask = tasks.map((t) => passHatK(t.length, t.filter(successful).length, k));
    passHat.push({ k, value: perTask.reduce((a, b) => a + b, 0) / perTask.length });
  }
  return {
    domain,
    tasks: tasks.length,
    trials: rewards.length,
    averageReward: rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null,
    maxK,
    passHatK: passHat,
    notEvaluated,
  };
}

/** Columns of pass^k the table shows (the JSON has every k). */
const SHOWN_K = 8;

/** The report as a table, then who played the user. */
export function renderTau2Report(report: Tau2Report): string {
  const num = (x: number | null | undefined) =>
    x === null || x === undefined ? '-' : x.toFixed(3);
  const ks = Math.min(SHOWN_K, Math.max(0, ...report.domains.map((d) => d.maxK)));
  const kHeads = Array.from({ length: ks }, (_, i) => `pass^${i + 1}`.padStart(9)).join('');
  const lines = [
    "τ²-bench (τ²'s reward per episode; pass^k per task as τ²'s compute_metrics, averaged over tasks)",
    `${'domain'.padEnd(10)}${'tasks'.padStart(7)}${'trials'.padStart(8)}${'avg reward'.padStart(12)}${kHeads}`,
  ];
  for (const d of report.domains) {
    const cells = Array.from({ length: ks }, (_, i) => num(d.passHatK[i]?.value).padStart(9));
    lines.push(
      `${d.domain.padEnd(10)}${String(d.tasks).padStart(7)}${String(d.trials).padStart(8)}${num(d.averageReward).padStart(12)}${cells.join('')}${d.notEvaluated ? `  (${d.notEvaluated} not evaluated)` : ''}`,
    );
  }
  if (!report.domains.length) lines.push('(no episode of a τ² task in these traces)');
  for (const p of report.users.played)
    lines.push(`user simulator: ${p.model} at ${p.endpoint} (${p.episodes} episode(s))`);
  if (report.users.unplayed)
    lines.push(
      `${report.users.unplayed} episode(s) ran without --user-endpoint: τ²'s user simulator did not play them (a scripted user did, or none, and the conversation ended after the task's opening)`,
    );
  if (report.otherEpisodes)
    lines.push(`${report.otherEpisodes} episode(s) of other tasks left out`);
  return lines.join('\n');
}
