/**
 * Short strings that recur over many rows (tool names, error codes, modes, statuses), numbered: a
 * row keeps a number in a typed column instead of a pointer. 0 is the empty string (none).
 */
export class NumberedTexts {
  /** `list[n]` is the text numbered n; `list[0]` is ''. Exposed read-only to the index snapshot. */
  readonly list: string[] = [''];
  private readonly numbers = new Map<string, number>();

  /** The number of a text, numbering it when new. */
  number(text: string): number {
    if (text === '') return 0;
    let n = this.numbers.get(text);
    if (n === undefined) {
      n = this.list.length;
      this.list.push(text);
      this.numbers.set(text, n);
    }
    return n;
  }

  /** The text numbered n. */
  text(n: number): string {
    return this.list[n];
  }

  clear(): void {
    this.list.length = 1;
    this.numbers.clear();
  }

  /** Takes the numbering of a snapshot's list as it was saved (`list[0]` must be ''). */
  restore(list: readonly string[]): void {
    if (list[0] !== '') throw new Error('bad text list');
    this.clear();
    list.forEach((t, i) => {
      if (i === 0) return;
      this.list.push(t);
      if (!this.numbers.has(t)) this.numbers.set(t, i);
    });
  }
}
