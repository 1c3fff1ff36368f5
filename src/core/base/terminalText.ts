import { randomBytes } from 'node:crypto';

/**
 * What a terminal acts on rather than shows: C0 controls but newline and tab (ESC starts the
 * sequences that retitle a window or clear the screen, BEL rings, CR overwrites the line), DEL, C1
 * controls (U+009B is a one-character CSI), the bidirectional marks, embeddings, overrides and
 * isolates that reorder what is shown ("Trojan Source", CVE-2021-42574), and lone surrogates (written
 * out they become U+FFFD, so two different texts would print the same).
 */
const CONTROL =
  '[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]' +
  '|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]';

/**
 * The studio's own styles are marks in the text, not escape sequences: a NUL, a token drawn afresh
 * by every process, and the SGR parameters. Text from outside cannot forge one (it was written
 * before the token existed, and a NUL of its own is shown escaped), so {@link terminalText} can
 * escape everything else and still turn exactly these into colour.
 */
const TOKEN = randomBytes(12).toString('hex');
const MARK = `\u0000${TOKEN}\\[([0-9;]*)m`;
const SHOWN = new RegExp(`${MARK}|${CONTROL}`, 'g');

/** A character as it is shown: `\x1b` below U+007F, `\u202e` from there on (both valid in JSON). */
function escaped(ch: string): string {
  const code = ch.charCodeAt(0);
  return code < 0x7f
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * The one way text reaches a terminal. Every control character a terminal would act on is shown
 * escaped (`\x1b`, `\u009b`, `\u202e`), with or without colour; newlines and tabs stay. The studio's
 * style marks ({@link styleMark}) become SGR colour codes when `color` is on and vanish when it is
 * off, so colour is added after the escaping and cannot be confused with escape sequences that
 * came from a task, a tool, a policy or a file.
 */
export function terminalText(text: string, options: { color: boolean }): string {
  return text.replace(SHOWN, (match: string, sgr: string | undefined) =>
    sgr === undefined ? escaped(match) : options.color ? `\u001b[${sgr}m` : '',
  );
}

/** A style mark for SGR parameters (`1` bold, `32` green, `39` default colour...), see {@link terminalText}. */
export function styleMark(sgr: string): string {
  return `\u0000${TOKEN}[${sgr}m`;
}
