/**
 * Splits a stream's text, chunk by chunk as it arrives, into whole lines for `each`. What follows
 * the last newline waits for the next chunk; at the stream's end it is {@link rest}.
 */
export class LineSplitter {
  private partial = '';

  constructor(private readonly each: (line: string) => void) {}

  /** Takes the next chunk; each line it completes goes to `each`, in order. */
  push(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.each(line);
  }

  /** The text after the last newline (empty when the stream so far ends with one). */
  get rest(): string {
    return this.partial;
  }
}
