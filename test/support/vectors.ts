import { readFileSync } from 'node:fs';
import { fromRoot } from './paths';

/** One case of a protocol vector file. */
export interface VectorCase<I, E> {
  name: string;
  input: I;
  expected: E;
  /** act.json and rehearsal.json: the expectation under the `envace` parse dialect. */
  envace?: E;
}

/** A protocol vector file: `test/vectors/protocol/<name>.json`. */
export interface VectorFile<I, E> {
  description: string;
  cases: VectorCase<I, E>[];
}

/** Loads a vector file (synchronously, so that `it()` can be generated per case). */
export function loadVectors<I, E>(name: string): VectorFile<I, E> {
  return JSON.parse(
    readFileSync(fromRoot('test', 'vectors', 'protocol', `${name}.json`), 'utf8'),
  ) as VectorFile<I, E>;
}
