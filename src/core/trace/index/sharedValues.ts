/** Distinct values kept; past this, values are stored as they come. */
const MAX_SHARED = 4096;

/**
 * One copy of equal short strings that recur over a trace's turns (act parse error codes, answer
 * previews of the same words): a copy per turn would hold megabytes. Shared values are never
 * mutated by the index or its readers. (Calls number their tools, codes and scores themselves:
 * {@link CallTable}.)
 */
export class SharedValues {
  private readonly texts = new Map<string, string>();

  /** The shared copy of a short recurring string. */
  text(value: string): string {
    const known = this.texts.get(value);
    if (known !== undefined) return known;
    if (this.texts.size < MAX_SHARED) this.texts.set(value, value);
    return value;
  }
}
