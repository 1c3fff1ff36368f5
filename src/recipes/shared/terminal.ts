import { terminalText } from '../../core/base/terminalText';

// The recipes reach a terminal only here, through terminalText as the CLI does: trainer lines,
// task text and error messages come from outside and are shown with their controls escaped.

/** Prints `text` on stdout, controls shown escaped. */
export function say(text: string): void {
  process.stdout.write(terminalText(text, { color: false }) + '\n');
}

/** Prints `text` on stderr, controls shown escaped. */
export function sayError(text: string): void {
  process.stderr.write(terminalText(text, { color: false }) + '\n');
}
