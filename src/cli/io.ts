// The one module of the CLI that touches the process streams (eslint.config.mjs forbids them
// elsewhere): every line a command prints, every error line and every progress bar goes through
// terminalText here, so text from a task, a tool, a policy or a file cannot drive the terminal.
import type { Options as BarOptions } from 'cli-progress';
import { Format, SingleBar } from 'cli-progress';
import { terminalText } from '../core/base/terminalText';

/** Where a command writes; tests pass buffers, the CLI passes the process streams. */
export interface CliIO {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Colour on or off for this invocation. */
  color: boolean;
}

/** Exit codes: 0 success, 1 a runtime failure (unreadable file...), 2 a usage error. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/**
 * The IO commands get: each line passes through {@link terminalText} (controls shown escaped, the
 * studio's style marks made colour when `color()` says so) before it reaches `sink`, the process
 * streams or a test's buffers. `color` is asked at each line, since `--no-color` is known only
 * once the command line is parsed.
 */
export function terminalIO(sink: CliIO, color: () => boolean): CliIO {
  return {
    out: (text) => sink.out(terminalText(text, { color: color() })),
    err: (text) => sink.err(terminalText(text, { color: color() })),
    get color() {
      return color();
    },
  };
}

/** The process streams as the sink of {@link terminalIO}, colour as NO_COLOR and FORCE_COLOR say. */
export function processStreams(): CliIO {
  return {
    out: (s) => process.stdout.write(s + '\n'),
    err: (s) => process.stderr.write(s + '\n'),
    color:
      (process.stdout.isTTY === true && !('NO_COLOR' in process.env)) ||
      'FORCE_COLOR' in process.env,
  };
}

/** Whether stderr is a terminal (a progress bar is worth drawing). */
export function stderrIsTerminal(): boolean {
  return process.stderr.isTTY === true;
}

/**
 * A progress bar on stderr. Its line, payload values included (a task id, a file name, a message
 * from pip), passes through {@link terminalText}; only the bar's own cursor codes are raw.
 */
export function progressBar(options: BarOptions & { format: string }): SingleBar {
  const { format } = options;
  return new SingleBar({
    ...options,
    stream: process.stderr,
    format: (opts, params, payload: Record<string, unknown>) =>
      terminalText(Format.Formatter({ ...opts, format }, params, payload), { color: false }),
  });
}
