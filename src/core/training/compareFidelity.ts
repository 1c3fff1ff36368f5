import type { FidelityReport, ScoreMeans } from '../report/fidelityReport';
import { renderTable, score } from '../report/textFormat';

/** The fidelity scores a comparison reports, in table order. */
export const COMPARED_SCORES = [
  'exactMatch',
  'fieldF1',
  'keyJaccard',
  'typeAgreement',
  'errorAgreement',
] as const;

/** One score under two policies. */
export interface ScoreDelta {
  a: number | null;
  b: number | null;
  /** b − a; null when either is missing. */
  delta: number | null;
}

/** The scores of one tool (or of all calls) under policies A and B. */
export interface FidelityDeltaRow {
  tool: string;
  calls: number;
  /** Rehearsals that parsed / rehearsals. */
  validity: ScoreDelta;
  scores: Record<(typeof COMPARED_SCORES)[number], ScoreDelta>;
}

/** A comparison of two replays of the same trace. */
export interface FidelityComparison {
  overall: FidelityDeltaRow;
  perTool: FidelityDeltaRow[];
  /**
   * Always null: replay re-rehearses recorded calls and plays no episode, so there is no task
   * success to compare. Measure it with `rehearse run --policy` on the held-out tasks.
   */
  taskSuccess: null;
}

const delta = (a: number | null, b: number | null): ScoreDelta => ({
  a,
  b,
  delta: a === null || b === null ? null : b - a,
});

function row(
  tool: string,
  calls: number,
  validA: number | null,
  validB: number | null,
  a: ScoreMeans | undefined,
  b: ScoreMeans | undefined,
): FidelityDeltaRow {
  const scores = Object.fromEntries(
    COMPARED_SCORES.map((k) => [k, delta(a?.[k] ?? null, b?.[k] ?? null)]),
  ) as FidelityDeltaRow['scores'];
  return { tool, calls, validity: delta(validA, validB), scores };
}

/**
 * Per-tool deltas of the fidelity scores (exact match, field F1, key Jaccard, type agreement,
 * error-state agreement) and of rehearsal validity between two reports of the same calls: B − A.
 */
export function compareFidelity(a: FidelityReport, b: FidelityReport): FidelityComparison {
  const tools = [
    ...new Set([...a.perTool.map((t) => t.tool), ...b.perTool.map((t) => t.tool)]),
  ].sort();
  const perTool = tools.map((tool) => {
    const ta = a.perTool.find((t) => t.tool === tool);
    const tb = b.perTool.find((t) => t.tool === tool);
    const validity = (t: typeof ta) =>
      t && t.calls ? (t.calls - t.rehearsalParseErrors) / t.calls : null;
    return row(tool, Math.max(ta?.calls ?? 0, tb?.calls ?? 0), validity(ta), validity(tb), ta, tb);
  });
  const validity = (r: FidelityReport) =>
    r.rehearsed ? r.rehearsalParseValid / r.rehearsed : null;
  return {
    overall: row(
      '(all)',
      Math.max(a.calls, b.calls),
      validity(a),
      validity(b),
      a.overall,
      b.overall,
    ),
    perTool,
    taskSuccess: null,
  };
}

const signed = (x: number | null) => (x === null ? '-' : `${x >= 0 ? '+' : ''}${x.toFixed(2)}`);

/** Column titles of the score columns, in {@link COMPARED_SCORES} order. */
export const COMPARED_SCORE_TITLES: Record<(typeof COMPARED_SCORES)[number], string> = {
  exactMatch: 'exact',
  fieldF1: 'field F1',
  keyJaccard: 'key Jaccard',
  typeAgreement: 'type',
  errorAgreement: 'error state',
};

/** The explanation printed under a comparison: what the numbers are. */
export const COMPARISON_NOTE =
  'Scores are means over the calls both sides answered; validity is the share of rehearsals that parsed. Δ = B − A.';

/** Why a comparison has no task success, and where to measure it. */
export const TASK_SUCCESS_NOTE =
  'Task success: not measured. Replay re-rehearses the recorded calls and plays no episode; compare task success with `rehearse run --policy <model>` on the held-out tasks.';

/** One score as `A→B (±Δ)`. */
export function deltaCell(d: ScoreDelta): string {
  return `${score(d.a)}→${score(d.b)} (${signed(d.delta)})`;
}

/** The comparison as table cells: a header, then per tool (and last over all calls) each score as `A→B (±Δ)`. */
export function comparisonTable(c: FidelityComparison): { header: string[]; rows: string[][] } {
  const header = [
    'tool',
    'calls',
    'validity',
    ...COMPARED_SCORES.map((k) => COMPARED_SCORE_TITLES[k]),
  ];
  const rows = [...c.perTool, c.overall].map((r) => [
    r.tool,
    String(r.calls),
    deltaCell(r.validity),
    ...COMPARED_SCORES.map((k) => deltaCell(r.scores[k])),
  ]);
  return { header, rows };
}

/** The comparison as a table: per tool, each score as `A→B (±Δ)`. */
export function renderFidelityComparison(
  c: FidelityComparison,
  names: { a: string; b: string },
): string {
  const { header, rows } = comparisonTable(c);
  return [
    `A: ${names.a}`,
    `B: ${names.b}`,
    '',
    renderTable(header, rows),
    '',
    COMPARISON_NOTE,
    TASK_SUCCESS_NOTE,
  ].join('\n');
}
