import type { FidelityScores } from '../fidelity/scores';
import type { DiffKind } from '../fidelity/structuralDiff';

/** Distinct values kept per kind; past this, values are stored as they come. */
const MAX_SHARED = 4096;

/**
 * One object for equal small values that recur over a trace's calls (tool names, fidelity scores,
 * diff counts): a million-call trace has a few dozen tools and few distinct score sets, and an object
 * per call would hold hundreds of megabytes. Shared values are never mutated by the index or its
 * readers.
 */
export class SharedValues {
  private readonly tools = new Map<string, string>();
  private readonly scoreSets = new Map<string, FidelityScores>();
  private readonly countSets = new Map<string, Record<DiffKind, number>>();

  /** The shared copy of a tool name. */
  tool(name: string): string {
    return share(this.tools, name, name);
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
