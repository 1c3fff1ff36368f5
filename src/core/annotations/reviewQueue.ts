import type { TraceIndex } from '../trace/traceIndex';
import type { CallOutcome } from '../trace/callTable';
import { fidelityRank } from '../trace/treeFilter';

/**
 * A call to review: its rehearsal missed (did not parse, or was scored and is not exact). A call
 * whose tool gave no response has nothing to compare and is not one.
 */
export function rehearsalMissed(o: Readonly<CallOutcome>): boolean {
  if (o.rehearsalError) return true;
  return !!o.scores && !o.scores.exactMatch;
}

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
export function reviewQueue(index: TraceIndex, done: (callId: string) => boolean): ReviewQueueState {
  const missed: { n: number; rank: number }[] = [];
  index.forEachCallOutcome((o, n) => { if (rehearsalMissed(o)) missed.push({ n, rank: fidelityRank(o) }); });
  missed.sort((a, b) => a.rank - b.rank || a.n - b.n);
  const pending: string[] = [];
  for (const m of missed) {
    const id = index.callIdAt(m.n);
    if (!done(id)) pending.push(id);
  }
  return { pending, total: missed.length, reviewed: missed.length - pending.length };
}
