/**
 * The one way the studio sets a timer whose delay is not a number written in the code. Node holds
 * a delay in 32 bits: past 2^31 - 1 ms (24.8 days) it warns (`TimeoutOverflowWarning`) and fires
 * after 1 ms, and so does a negative or NaN delay. A task's `"episodeTimeoutMs": 3000000000` ended
 * every episode at once that way. Numbers from outside are refused at read time by their
 * documented range (core/base/numbers.ts); this is the last line of defence behind it.
 * eslint.config.mjs forbids `setTimeout`/`setInterval` with a delay that is not a literal elsewhere.
 */

/** A timer as the runtime returns it (Node's `Timeout`; a number in the webviews). */
export type TimerHandle = ReturnType<typeof setTimeout>;

/** The longest delay Node's timers hold: 2^31 - 1 ms, about 24.8 days. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * The delay a timer is set with: `ms` itself within 0 .. {@link MAX_TIMER_DELAY_MS}; longer delays
 * (Infinity too) clamp to the longest, never wrapping to "at once". NaN and negative delays are a
 * caller's bug (a limit from outside is checked where it is read): they throw a RangeError rather
 * than fire at once.
 */
export function timerDelay(ms: number): number {
  if (typeof ms !== 'number' || Number.isNaN(ms) || ms < 0)
    throw new RangeError(`A timer delay must be a number of milliseconds from 0, not ${ms}.`);
  return Math.min(ms, MAX_TIMER_DELAY_MS);
}

/** `setTimeout(fn, ms)` with the delay from {@link timerDelay}. */
export function safeTimeout(fn: () => void, ms: number): TimerHandle {
  return setTimeout(fn, timerDelay(ms));
}

/** `setInterval(fn, ms)` with the period from {@link timerDelay}. */
export function safeInterval(fn: () => void, ms: number): TimerHandle {
  return setInterval(fn, timerDelay(ms));
}

/**
 * Resolves after `ms` (through {@link timerDelay}). `unref`: the wait keeps no process alive.
 */
export function delayMs(ms: number, options: { unref?: boolean } = {}): Promise<void> {
  return new Promise<void>((resolve) => {
    const delay = timerDelay(ms); // a RangeError rejects the promise
    const timer = safeTimeout(resolve, delay);
    // Node's timers have unref; a webview's are numbers and keep nothing alive anyway.
    if (options.unref) (timer as { unref?: () => void }).unref?.();
  });
}
