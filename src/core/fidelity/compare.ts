import type { DiffEntry, DiffKind } from './structuralDiff';
import { structuralDiff, summarizeDiff } from './structuralDiff';
import type { ResponseValue } from './responseValue';
import type { FidelityScores } from './scores';
import { jsonScores, responseText, textScores } from './scores';
import type { TextChange } from './textDiff';
import { wordDiff } from './textDiff';

/** Why a call's rehearsal and actual response could not be compared. */
export type NotComparableReason =
  'rehearsal-parse-error' | 'no-rehearsal' | 'no-actual' | 'actual-error';

/** The comparison of one call's rehearsal with its actual response. */
export type CallComparison =
  | {
      comparable: 'json';
      scores: FidelityScores;
      diff: DiffEntry[];
      counts: Record<DiffKind, number>;
    }
  | { comparable: 'text'; scores: FidelityScores; textDiff: TextChange[] }
  | { comparable: 'none'; reason: NotComparableReason };

/**
 * Compares a rehearsal with the actual response: a structural diff and scores when both are JSON, a
 * word diff and text scores when either is text.
 */
export function compareResponses(rehearsal: ResponseValue, actual: ResponseValue): CallComparison {
  if (rehearsal.kind === 'json' && actual.kind === 'json') {
    const diff = structuralDiff(rehearsal.value, actual.value);
    return {
      comparable: 'json',
      scores: jsonScores(rehearsal.value, actual.value, rehearsal.isError, actual.isError),
      diff,
      counts: summarizeDiff(diff),
    };
  }
  const r = responseText(rehearsal);
  const a = responseText(actual);
  return {
    comparable: 'text',
    scores: textScores(r, a, rehearsal.isError, actual.isError),
    textDiff: wordDiff(r, a),
  };
}
