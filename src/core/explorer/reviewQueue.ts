import type { TraceIndex } from '../trace/index/traceIndex';
import { fidelityRank, rehearsalVerdict } from './treeFilter';

/** Where a review of one run stands. */
export interface ReviewQueueState {
  /** Calls to review, least faithful first (ties in recorded order). */
  pending: string[];
  /** Every call of the run whose rehearsal missed. */
  total: number;
  /** Of those, the ones marked, accepted or skipped. */
  reviewed: number;
}

/**
 * The review queue of a run: the calls whose rehearsal missed and that nobody has annotated or
 * skipped yet, least faithful first, as *Review Mismatches* walks them. Annotations live in the
 * run's annotations.jsonl and skips in the editor's state, so a review resumes where it stopped.
 */
export function reviewQueue(
  index: TraceIndex,
  done: (callId: string) => boolean,
): ReviewQueueState {
  const missed: { n: number; rank: number }[] = [];
  // A call to review is one whose rehearsal missed; one whose tool gave no response has nothing to compare.
  index.forEachCallOutcome((o, n) => {
    if (rehearsalVerdict(o) === 'wrong') missed.push({ n, rank: fidelityRank(o) });
  });
  missed.sort((a, b) => a.rank - b.rank || a.n - b.n);
  const pending: string[] = [];
  for (const m of missed) {
    const id = index.callIdAt(m.n);
    if (!done(id)) pending.push(id);
  }
  return { pending, total: missed.length, reviewed: missed.length - pending.length };
}
