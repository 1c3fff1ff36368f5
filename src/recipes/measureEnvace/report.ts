import type { Effects } from './effectsFile';
import type { Difference, Interval, Summary } from './stats';

const pct = (x: Interval) =>
  `${(100 * x.mean).toFixed(1)}% [${(100 * x.low).toFixed(1)}, ${(100 * x.high).toFixed(1)}]`;

const num = (x: number | Interval | null | undefined) =>
  x === null || x === undefined
    ? '-'
    : typeof x === 'number'
      ? x.toFixed(2)
      : `${x.mean.toFixed(2)} [${x.low.toFixed(2)}, ${x.high.toFixed(2)}]`;

/** The header of every results table. */
export const TABLE_HEADER =
  '| | task success [95% CI] | mean reward | field F1 | key Jaccard | rehearsal validity | act parse validity |\n| --- | --- | --- | --- | --- | --- | --- |';

/** One arm's row of a results table. */
export function summaryRow(name: string, s: Summary): string {
  const cells = [pct(s.success), num(s.reward), num(s.fieldF1), num(s.keyJaccard)];
  return `| ${name} | ${cells.join(' | ')} | ${num(s.rehearsalValidity)} | ${num(s.actValidity)} |`;
}

/** The paired differences as a table. */
export function differenceTable(differences: readonly Difference[]): string[] {
  return [
    "### Paired differences (each task's difference of its seed-averaged values; 95% bootstrap interval over tasks)",
    '',
    '| difference | metric | mean | 95% interval |',
    '| --- | --- | --- | --- |',
    ...differences.map(
      (d) =>
        `| ${d.name} | ${d.metric} | ${d.mean >= 0 ? '+' : ''}${d.mean.toFixed(3)} | [${d.ci95[0].toFixed(3)}, ${d.ci95[1].toFixed(3)}] |`,
    ),
  ];
}

const share = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The trained arms' compute: what equal act updates means, checked, and what each arm cost. */
export function computeTable(c: Effects['compute']): string[] {
  const row = (name: string, a: Effects['compute']['imagined']) =>
    `| ${name} | ${a.actUpdates} of ${a.steps} | ${a.actTokens} | ${a.episodes} | ${a.realToolCalls} | ${share(a.imaginedParseFailRate)} |`;
  const equal = c.imagined.actUpdates === c.real.actUpdates;
  return [
    'GRPO compute per arm (all seeds):',
    '',
    '| arm | optimizer steps with act tokens | act tokens trained | rollout episodes | real tool calls | rollouts ended by an unparsable rehearsal |',
    '| --- | --- | --- | --- | --- | --- |',
    row('imagined', c.imagined),
    row('real', c.real),
    '',
    equal
      ? 'Both arms made the same number of act updates.'
      : `**The arms' act updates differ** (${c.imagined.actUpdates} against ${c.real.actUpdates}): some episode had no act row to train (one longer than data.max_length is dropped).`,
  ];
}

/** How faithful BASE's imagination is: its imagined and real rollouts of the same tasks. */
export function fidelityLines(e: Effects, base: string): string[] {
  const f = e.fidelity;
  const rank = e.imaginedRealRankCorr === null ? 'undefined' : e.imaginedRealRankCorr.toFixed(2);
  return [
    `### Imagined against real rollouts of the starting policy (${base}; ${f.tasks} GRPO-range tasks × ${f.episodesPerTask} episodes each way, both graded by trajectory items alone)`,
    '',
    '| | task success | mean reward |',
    '| --- | --- | --- |',
    `| imagined (the policy rehearses the tools) | ${share(e.imaginedSuccess)} | ${f.imaginedReward.toFixed(3)} |`,
    `| real tools | ${share(e.realSuccess)} (${share(f.realSuccessOnState)} graded on the real state too) | ${f.realReward.toFixed(3)} |`,
    '',
    `Spearman's rank correlation of the tasks' mean rewards, imagined against real: ${rank}. Imagined episodes that ended on an unparsable rehearsal: ${share(f.imaginedParseFailRate)}.`,
  ];
}
