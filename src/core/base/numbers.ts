import type { StudioErrorCode } from './errorCodes';
import { StudioError } from './errors';
import type { ParseResult } from './json';
import { describeOutsideValue, outsideNumber } from './json';

/**
 * A number from outside (a task file, a run file, a setting, a flag, an HTTP body, a model config)
 * as the studio takes it: where it is written, its documented range and the code of its fault.
 * docs/reliability.md lists every one (`OUTSIDE_NUMBERS`), and a test keeps the table in step.
 */
export interface OutsideNumberSpec {
  /** As the user writes it: `$.limits.episodeTimeoutMs`, `--seed`, `rehearsal.run.seed`, `"top_p"`. */
  name: string;
  /** Least value taken (itself refused when `minExcluded`). */
  min: number;
  /** Greatest value taken. */
  max: number;
  /** Whole numbers only. */
  integer?: boolean;
  /** `min` itself is refused (a share above 0). */
  minExcluded?: boolean;
  /** `max` itself is refused (a share below 1). */
  maxExcluded?: boolean;
  /** What the number counts, shown after the range: `ms, 24 hours`. */
  unit?: string;
  /** The code of a value out of range. */
  code: StudioErrorCode;
}

/** A number that is not in its range: the code, the field and a message naming both and the range. */
export interface NumberFault {
  code: StudioErrorCode;
  name: string;
  /** The range in words: `a whole number from 1 to 86,400,000 (ms, 24 hours)`. */
  range: string;
  /** What was there, as {@link describeOutsideValue} names it. */
  found: string;
  /** `<name> must be <range>, not <found>`. */
  message: string;
}

/** A bound as people read it: whole numbers with thousands separators, others as written. */
function shown(n: number): string {
  return Number.isInteger(n) && Math.abs(n) < 1e21 ? n.toLocaleString('en-US') : String(n);
}

/** The range of `spec` in words: `a whole number from 1 to 86,400,000 (ms, 24 hours)`. */
export function describeRange(spec: Omit<OutsideNumberSpec, 'name' | 'code'>): string {
  const from = spec.minExcluded ? `above ${shown(spec.min)}` : `from ${shown(spec.min)}`;
  const to = spec.maxExcluded ? `and below ${shown(spec.max)}` : `to ${shown(spec.max)}`;
  const unit = spec.unit ? ` (${spec.unit})` : '';
  return `${spec.integer ? 'a whole number' : 'a number'} ${from} ${to}${unit}`;
}

/** Decimal notation only: `Number()` would also take `0x10`, `0b1`, `Infinity` and blanks as 0. */
const DECIMAL = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/**
 * The one reader of numbers from outside: `value` if it is a finite number within `spec`'s range,
 * else a fault whose message names the field, the range and what was there. A string is taken
 * only when `text` is set (a command-line flag, an environment variable) and it is written in
 * decimal. Never throws, whatever `value` is.
 */
export function readNumber(
  value: unknown,
  spec: OutsideNumberSpec,
  options: { text?: boolean } = {},
): ParseResult<number, NumberFault> {
  const n =
    typeof value === 'number' || (options.text && typeof value === 'string' && DECIMAL.test(value))
      ? outsideNumber(value)
      : Number.NaN;
  const inRange =
    Number.isFinite(n) &&
    (spec.minExcluded ? n > spec.min : n >= spec.min) &&
    (spec.maxExcluded ? n < spec.max : n <= spec.max) &&
    (!spec.integer || Number.isInteger(n));
  if (inRange) return { ok: true, value: n === 0 ? 0 : n }; // -0 reads as 0
  const range = describeRange(spec);
  const found = describeOutsideValue(value);
  const message = `${spec.name} must be ${range}, not ${found}`;
  return { ok: false, error: { code: spec.code, name: spec.name, range, found, message } };
}

/**
 * {@link readNumber} for values that may be absent: `undefined` (and `null`) give `fallback`.
 */
export function readOptionalNumber<F extends number | undefined>(
  value: unknown,
  spec: OutsideNumberSpec,
  fallback: F,
  options: { text?: boolean } = {},
): ParseResult<number | F, NumberFault> {
  if (value === undefined || value === null) return { ok: true, value: fallback };
  return readNumber(value, spec, options);
}

/** The fault as the coded error callers throw; `where` (a file) goes before the message. */
export function numberFaultError(fault: NumberFault, where?: string, advice?: string): StudioError {
  return new StudioError(
    fault.code,
    `${where ? `${where}: ` : ''}${fault.message}.${advice ? ` ${advice}` : ''}`,
    { field: fault.name },
  );
}

/**
 * {@link readOptionalNumber} for callers that stop at the first fault: the number, or a thrown
 * {@link StudioError} with the spec's code.
 */
export function requireNumber<F extends number | undefined>(
  value: unknown,
  spec: OutsideNumberSpec,
  fallback: F,
  options: { text?: boolean; where?: string; advice?: string } = {},
): number | F {
  const read = readOptionalNumber(value, spec, fallback, options);
  if (!read.ok) throw numberFaultError(read.error, options.where, options.advice);
  return read.value;
}
