/**
 * Progress lines of the editor-test harness: every line carries the seconds since the harness
 * started, so a slow step shows up in CI logs without extra tooling.
 */
const started = Date.now();

/** Seconds since the harness started, as `  12.3s`. */
export function elapsed(): string {
  return `${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s`;
}

/** Prints one progress line. */
export function log(message: string): void {
  console.log(`[${elapsed()}] ${message}`);
}

/** Runs a step, prints how long it took, and records the time under `name`. */
export async function timed<T>(
  timings: Record<string, number>,
  name: string,
  step: () => Promise<T>,
): Promise<T> {
  const t0 = Date.now();
  try {
    return await step();
  } finally {
    timings[name] = Date.now() - t0;
    log(`${name}: ${(timings[name] / 1000).toFixed(1)}s`);
  }
}
