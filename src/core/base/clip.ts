/** `text` cut to at most `max` characters, with `…` where it was cut: for messages that quote outside text. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
