/**
 * Turns a growing list of token ids into text deltas without splitting a multi-byte character:
 * it decodes a window of recent tokens and holds back text that ends in a replacement character.
 */
export class TextStream {
  private windowStart = 0;
  private printed = 0;
  private readonly ids: number[] = [];

  constructor(private readonly decode: (ids: number[]) => string) {}

  /** Adds a token; returns the new, complete text (possibly empty). */
  push(id: number): string {
    this.ids.push(id);
    const text = this.decode(this.ids.slice(this.windowStart));
    if (text.endsWith('\uFFFD')) return '';
    const delta = text.slice(this.printed);
    this.printed = text.length;
    // Restart the window at a newline so that decoding stays cheap on long outputs.
    if (text.endsWith('\n')) {
      this.windowStart = this.ids.length;
      this.printed = 0;
    }
    return delta;
  }
}
