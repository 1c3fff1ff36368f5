import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { STUDIO_ERROR_CODES } from '../../../src/core/base/errorCodes';
import type { StudioErrorCode } from '../../../src/core/base/errorCodes';
import { readNumber } from '../../../src/core/base/numbers';
import type { OutsideNumberSpec } from '../../../src/core/base/numbers';
import { OUTSIDE_NUMBERS } from '../../../src/core/base/outsideNumbers';
import type { FuzzTarget } from './targets';

const CODES = Object.keys(STUDIO_ERROR_CODES) as StudioErrorCode[];

/** Values from outside: JSON of every kind, numbers at and past the edges, and decimal-looking text. */
const value = fc.oneof(
  fc.jsonValue(),
  fc.double(),
  fc.integer(),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 2 ** 31, 2 ** 53, 3e9, 1e308, Number.MIN_VALUE),
  fc.constantFrom('0x10', '0b1', '1e400', '', ' ', ' 42 ', '-0', 'Infinity', '.5', '5.', '1_000'),
  fc.double().map(String),
  fc.constantFrom(undefined, { valueOf: () => 3 }, Object.create(null) as object, [1]),
);

/** A range: bounds anywhere (equal, crossed, infinite), whole or not, ends included or not. */
const spec: fc.Arbitrary<OutsideNumberSpec> = fc.oneof(
  fc.constantFrom(...Object.values(OUTSIDE_NUMBERS)),
  fc.record({
    name: fc.string({ maxLength: 12 }),
    min: fc.oneof(fc.double({ noNaN: true }), fc.integer()),
    max: fc.oneof(fc.double({ noNaN: true }), fc.integer()),
    integer: fc.boolean(),
    minExcluded: fc.boolean(),
    maxExcluded: fc.boolean(),
    code: fc.constantFrom(...CODES),
  }),
);

/**
 * The one reader of numbers from outside (core/base/numbers.ts): arbitrary values against random
 * ranges, as JSON and as a flag's text. The promise: a finite number within the range (whole when
 * asked), or a fault with the range's code naming the field; never an exception.
 */
export const numbersTarget: FuzzTarget = {
  name: 'numbers from outside (the one reader)',
  property: () =>
    fc.property(value, spec, fc.boolean(), (v, range, text) => {
      const read = readNumber(v, range, { text });
      if (read.ok) {
        const n = read.value;
        assert.ok(Number.isFinite(n), `not finite: ${n}`);
        assert.ok(range.minExcluded ? n > range.min : n >= range.min, `below ${range.min}: ${n}`);
        assert.ok(range.maxExcluded ? n < range.max : n <= range.max, `above ${range.max}: ${n}`);
        if (range.integer) assert.ok(Number.isInteger(n), `not whole: ${n}`);
        if (!text) assert.equal(typeof v, 'number', 'text taken without text: true');
      } else {
        assert.equal(read.error.code, range.code);
        assert.ok(read.error.message.startsWith(`${range.name} must be `), read.error.message);
      }
    }),
};
