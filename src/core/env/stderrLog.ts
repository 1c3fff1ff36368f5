import type { Readable } from 'node:stream';

/**
 * Splits a server's stderr into lines, hands each to the host's log sink, and keeps the last ones
 * so a crash can be reported with them.
 */
export class StderrLog {
  private partial = '';
  private readonly lines: string[] = [];

  constructor(
    private readonly sink: ((line: string) => void) | undefined,
    private readonly prefix: string,
    private readonly keep = 40,
    /** Sees every line as written (unprefixed), before the sink. */
    private readonly watch?: (line: string) => void,
  ) {}

  /** Follows a stream until it ends. */
  follow(stream: Readable): void {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => this.push(chunk));
    stream.on('end', () => this.flush());
  }

  /** Adds raw text. */
  push(chunk: string): void {
    const parts = (this.partial + chunk).split(/\r?\n/);
    this.partial = parts.pop() ?? '';
    // A runaway writer must not grow memory: an unterminated line is cut at 4 KiB.
    if (this.partial.length > 4096) {
      parts.push(this.partial.slice(0, 4096) + '…');
      this.partial = '';
    }
    for (const line of parts) this.line(line);
  }

  /** Emits a pending unterminated line. */
  flush(): void {
    if (this.partial) {
      this.line(this.partial);
      this.partial = '';
    }
  }

  /** The last lines, oldest first, at most `maxChars` characters in all. */
  tail(maxChars = 2000): string {
    const all = [...this.lines, ...(this.partial ? [this.partial] : [])];
    let out = '';
    for (let i = all.length - 1; i >= 0; i--) {
      const next = all[i] + (out ? '\n' + out : '');
      if (next.length > maxChars) break;
      out = next;
    }
    return out;
  }

  private line(line: string): void {
    const clipped = line.length > 4096 ? line.slice(0, 4096) + '…' : line;
    this.lines.push(clipped);
    if (this.lines.length > this.keep) this.lines.shift();
    this.watch?.(clipped);
    this.sink?.(`[${this.prefix}] ${clipped}`);
  }
}
