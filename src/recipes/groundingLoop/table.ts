/** The held-out share of each domain's tasks (the last third). */
export const HELD_OUT = 1 / 3;

/** Whether the `index`-th of `count` sorted tasks is held out. */
export function splitHeldOut(index: number, count: number): boolean {
  return index >= Math.round(count * (1 - HELD_OUT));
}

/** The grounding run file: a few steps of SFT of `base` on the grounding rows. */
export function groundingRunFile(base: string, rows: string, outDir: string, steps: number) {
  return {
    name: 'grounding-loop',
    objective: 'sft',
    base,
    data: { train: [rows] },
    out_dir: outDir,
    seed: 0,
    hyperparameters: {
      optim: { lr: 0.0005, schedule: 'constant', warmup_steps: 0 },
      train: {
        steps,
        batch_size: 8,
        micro_batch_size: 4,
        checkpoint_every: 10,
        export_at_end: true,
      },
      data: { max_length: 3072 },
    },
    hardware: { device: 'auto', threads: 2 },
  };
}

/** A figure of the old (a) and the new (b) policy. */
interface Pair {
  a: number | null;
  b: number | null;
}

/** One row of `rehearse compare --json`'s comparison. */
interface ComparisonRow {
  tool: string;
  calls: number;
  validity: Pair;
  scores: Record<
    'exactMatch' | 'fieldF1' | 'keyJaccard' | 'typeAgreement' | 'errorAgreement',
    Pair
  >;
}

/** What `rehearse compare --only-marked --json` prints, as far as the loop reads it. */
export interface Comparison {
  onlyMarked: number;
  comparison: { perTool: ComparisonRow[]; overall: ComparisonRow };
}

/** The comparison as a table: each figure old→new, per tool and overall. */
export function comparisonTable(json: Comparison): string {
  const f = (v: number | null) => (v === null ? '-' : v.toFixed(2));
  const cell = (d: Pair) => `${f(d.a)}→${f(d.b)}`;
  const lines = [
    `held-out marked calls: ${json.onlyMarked}`,
    'tool                  calls  valid JSON   exact       field F1    key Jaccard  type        error state',
  ];
  for (const r of [...json.comparison.perTool, json.comparison.overall]) {
    const s = r.scores;
    const figures = [
      r.validity,
      s.exactMatch,
      s.fieldF1,
      s.keyJaccard,
      s.typeAgreement,
      s.errorAgreement,
    ];
    lines.push(
      `${r.tool.padEnd(22)}${String(r.calls).padStart(5)}  ${figures.map((d) => cell(d).padEnd(11)).join(' ')}`,
    );
  }
  return lines.join('\n');
}
