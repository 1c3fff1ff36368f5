import { say } from './terminal';

/** A progress logger: each line prefixed with the recipe's name and the minutes since it began. */
export interface ProgressLog {
  (message: string): void;
  /** When the recipe began (ms since the epoch). */
  readonly started: number;
}

/** A {@link ProgressLog} for the recipe `name`, starting now. */
export function progressLog(name: string, now = Date.now): ProgressLog {
  const started = now();
  const log = (message: string) =>
    say(`[${name} ${((now() - started) / 60000).toFixed(1)} min] ${message}`);
  return Object.assign(log, { started });
}
