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
