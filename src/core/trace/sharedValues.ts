import type { FidelityScores } from '../fidelity/scores';
import type { DiffKind } from '../fidelity/structuralDiff';

/** Distinct values kept per kind; past this, values are stored as they come. */
const MAX_SHARED = 4096;

/**
 * One copy of equal small values that recur over a trace's calls (tool names, error codes, fidelity
 * scores, diff counts): a million-call trace has a few dozen tools and few distinct score sets, and
 * a copy per call would hold a hundred megabytes. Shared values are never mutated by the index or
 * its readers.
 */
export class SharedValues {
  private readonly texts = new Map<string, string>();
  private readonly scoreSets = new Map<string, FidelityScores>();
  private readonly countSets = new Map<string, Record<DiffKind, number>>();

  /** The shared copy of a short recurring string: a tool name, an error code. */
  text(value: string): string {
    return share(this.texts, value, value);
  }

  /** The shared copy of a score set. */
  scores(s: FidelityScores): FidelityScores {
    return share(this.scoreSets, `${s.exactMatch}|${s.fieldF1}|${s.keyJaccard}|${s.typeAgreement}|${s.errorAgreement}|${Object.keys(s).length}`, s);
  }

  /** The shared copy of a set of diff counts. */
  counts(c: Record<DiffKind, number>): Record<DiffKind, number> {
    return share(this.countSets, `${c.added}|${c.removed}|${c.changed}|${c.typeChanged}|${Object.keys(c).length}`, c);
  }
}

function share<T>(values: Map<string, T>, key: string, value: T): T {
  const known = values.get(key);
  if (known !== undefined) return known;
  if (values.size < MAX_SHARED) values.set(key, value);
  return value;
}
