/** `text` cut to at most `max` characters, with `…` where it was cut: for messages that quote outside text. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The first non-blank line of a message (a library's multi-line error), cut at 300 characters. */
export function firstLine(message: string): string {
  const line = message.split('\n').find((l) => l.trim()) ?? message;
  return line.length > 300 ? line.slice(0, 299) + '…' : line;
}

/** `text` cut to at most `max` UTF-8 bytes (on a character boundary), marked with `…` when cut. */
export function clipBytes(text: string, max: number): string {
  if (Buffer.byteLength(text, 'utf8') <= max) return text;
  let out = '';
  let used = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (used + size > max - 3) break;
    out += ch;
    used += size;
  }
  return `${out}…`;
}
