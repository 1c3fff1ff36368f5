/**
 * The fidelity comparison panel (webview/compare): what it shows of a comparison of two policies on
 * a held-out trace, and the messages between it and its host. The host computes every cell; the
 * panel only draws the table and the bar chart of per-tool deltas.
 */
import { z } from 'zod';
import { panelMessageParser, readyMessageSchema } from '../../base/panelMessages';
import type { FidelityComparison } from '../compareFidelity';
import {
  COMPARED_SCORE_TITLES,
  COMPARED_SCORES,
  COMPARISON_NOTE,
  TASK_SUCCESS_NOTE,
  comparisonTable,
} from '../compareFidelity';

/** Per-tool deltas (B − A) of each score, as bar chart data: tools on x, one dataset per score. */
export interface DeltaBars {
  labels: string[];
  datasets: { label: string; data: (number | null)[] }[];
}

/** Where a comparison stands, and what it found. */
export interface CompareSnapshot {
  trace: string;
  a: string;
  b: string;
  status: 'running' | 'done' | 'failed' | 'cancelled';
  /** Progress while running; the error when it failed. */
  message?: string;
  table?: { header: string[]; rows: string[][] };
  bars?: DeltaBars;
  notes: string[];
}

/** The per-tool deltas of validity and each fidelity score. */
export function deltaBars(c: FidelityComparison): DeltaBars {
  return {
    labels: c.perTool.map((t) => t.tool),
    datasets: [
      { label: 'Δ validity', data: c.perTool.map((t) => t.validity.delta) },
      ...COMPARED_SCORES.map((k) => ({
        label: `Δ ${COMPARED_SCORE_TITLES[k]}`,
        data: c.perTool.map((t) => t.scores[k].delta),
      })),
    ],
  };
}

/** The finished comparison as the panel shows it. */
export function comparedSnapshot(
  base: Pick<CompareSnapshot, 'trace' | 'a' | 'b'>,
  c: FidelityComparison,
): CompareSnapshot {
  return {
    ...base,
    status: 'done',
    table: comparisonTable(c),
    bars: deltaBars(c),
    notes: [COMPARISON_NOTE, TASK_SUCCESS_NOTE],
  };
}

const compareMessageSchema = z.discriminatedUnion('type', [
  readyMessageSchema,
  z.object({
    type: z.literal('rendered'),
    rows: z.number().int().nonnegative(),
    bars: z.number().int().nonnegative(),
  }),
]);

/** What the comparison panel sends to its host. */
export type CompareMessage = z.infer<typeof compareMessageSchema>;

/** What the host sends to the comparison panel. */
export type CompareHostMessage = { type: 'snapshot'; snapshot: CompareSnapshot };

/** A comparison panel message, if `value` is one. */
export const parseCompareMessage: (value: unknown) => CompareMessage | undefined =
  panelMessageParser(compareMessageSchema);
