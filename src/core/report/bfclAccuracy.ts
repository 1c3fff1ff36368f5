import { gradedEpisodes } from './gradedEpisodes';

/** One multi-turn category's accuracy, as BFCL's leaderboard reports it. */
export interface BfclCategoryAccuracy {
  /** BFCL's test category (`multi_turn_base`). */
  category: string;
  /** Episodes graded by a `bfcl` item (passed or failed). */
  graded: number;
  passed: number;
  /** passed / graded, or null when none was graded. */
  accuracy: number | null;
  /** Episodes whose `bfcl` item was not evaluated (no Python environment, a grader fault). */
  notEvaluated: number;
}

/** `rehearse report --format bfcl`: accuracy per category and overall. */
export interface BfclAccuracyReport {
  categories: BfclCategoryAccuracy[];
  /** The unweighted mean of the categories' accuracies (BFCL's multi-turn overall), or null. */
  overall: number | null;
  /** Episodes of the traces that have no `bfcl` item (other tasks), left out. */
  otherEpisodes: number;
}

/** `multi_turn_base` for the task id `multi_turn_base_12` (BFCL's category of a record). */
export function bfclCategory(taskId: string): string {
  const cut = taskId.lastIndexOf('_');
  return cut > 0 ? taskId.slice(0, cut) : taskId;
}

/**
 * BFCL accuracy of recorded runs: every committed episode (private rehearsal's imagined ones are
 * not answers) of a task with a `bfcl` item counts once in its record's category, passed when that
 * item passed.
 */
export async function buildBfclAccuracy(files: readonly string[]): Promise<BfclAccuracyReport> {
  const byCategory = new Map<string, BfclCategoryAccuracy>();
  const { episodes, otherEpisodes } = await gradedEpisodes(files, 'bfcl');
  for (const { taskId, status, item } of episodes) {
    const category = bfclCategory(taskId);
    const row = byCategory.get(category) ?? {
      category,
      graded: 0,
      passed: 0,
      accuracy: null,
      notEvaluated: 0,
    };
    // An episode that ended on an error fails as BFCL's force_terminated, whatever its item says.
    const passed = item.passed === true && status === 'completed';
    if (item.passed === null && status === 'completed') row.notEvaluated++;
    else {
      row.graded++;
      if (passed) row.passed++;
    }
    byCategory.set(category, row);
  }
  const categories = [...byCategory.values()]
    .map((r) => ({ ...r, accuracy: r.graded ? r.passed / r.graded : null }))
    .sort((a, b) => a.category.localeCompare(b.category));
  const scored = categories.filter((c) => c.accuracy !== null);
  return {
    categories,
    overall: scored.length
      ? scored.reduce((s, c) => s + (c.accuracy ?? 0), 0) / scored.length
      : null,
    otherEpisodes,
  };
}

/** The report as a table. */
export function renderBfclAccuracy(report: BfclAccuracyReport): string {
  const pct = (x: number | null) => (x === null ? '-' : `${(100 * x).toFixed(1)}%`);
  const lines = [
    "BFCL-v4 multi-turn accuracy (BFCL's verdict per record, as its leaderboard reports it)",
    `${'category'.padEnd(26)}${'graded'.padStart(7)}${'passed'.padStart(8)}${'accuracy'.padStart(10)}`,
  ];
  for (const c of report.categories)
    lines.push(
      `${c.category.padEnd(26)}${String(c.graded).padStart(7)}${String(c.passed).padStart(8)}${pct(c.accuracy).padStart(10)}${c.notEvaluated ? `  (${c.notEvaluated} not evaluated)` : ''}`,
    );
  if (!report.categories.length) lines.push('(no episode of a BFCL task in these traces)');
  lines.push(`overall (mean of the categories): ${pct(report.overall)}`);
  if (report.otherEpisodes)
    lines.push(`${report.otherEpisodes} episode(s) of other tasks left out`);
  return lines.join('\n');
}
