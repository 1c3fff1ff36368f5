/** `text` cut to at most `max` characters, with `…` where it was cut: for messages that quote outside text. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The first non-blank line of a message (a library's multi-line error), cut at 300 characters. */
export function firstLine(message: string): string {
  const line = message.split('\n').find((l) => l.trim()) ?? message;
  return line.length > 300 ? line.slice(0, 299) + '…' : line;
}
