import { canonicalJson } from '../base/canonicalJson';
import type { JsonValue } from '../base/json';
import { countAgreement } from './agreement';
import type { ResponseValue } from './responseValue';

/**
 * Agreement of a rehearsal with the actual response. Scores are in [0, 1]; `null` where a score
 * does not apply (schema scores of a text response).
 */
export interface FidelityScores {
  /** Canonical JSON (or text) of both sides is identical. */
  exactMatch: boolean;
  /** F1 over (path, value) leaves; for text, F1 over word tokens. */
  fieldF1: number;
  /** Jaccard index of the key paths, array indices generalised: schema fidelity. */
  keyJaccard: number | null;
  /** Share of the paths present in both whose JSON types agree. */
  typeAgreement: number | null;
  /** Both are errors, or both are successes. */
  errorAgreement: boolean;
}

/** F1 of two sets; two empty sets agree perfectly. */
export function setF1(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  return f1(intersectionSize(a, b), a.size, b.size);
}

function f1(common: number, predicted: number, actual: number): number {
  if (predicted === 0 && actual === 0) return 1;
  if (common === 0) return 0;
  const precision = common / predicted;
  const recall = common / actual;
  return (2 * precision * recall) / (precision + recall);
}

/** Jaccard index of two sets; two empty sets agree perfectly. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  const common = intersectionSize(a, b);
  return common / (a.size + b.size - common);
}

function intersectionSize(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let n = 0;
  for (const x of small) if (large.has(x)) n++;
  return n;
}

/** Scores of two JSON values, as defined on the path sets of {@link indexPaths}. */
export function jsonScores(
  rehearsal: JsonValue,
  actual: JsonValue,
  rehearsalIsError: boolean,
  actualIsError: boolean,
): FidelityScores {
  const c = countAgreement(rehearsal, actual);
  return {
    // The leaves (full path = canonical value) determine a value, so the two are equal as JSON
    // exactly when every leaf is common: no need to write both documents out canonically.
    exactMatch: c.commonLeaves === c.rehearsalLeaves && c.commonLeaves === c.actualLeaves,
    fieldF1: f1(c.commonLeaves, c.rehearsalLeaves, c.actualLeaves),
    keyJaccard: c.keysInEither === 0 ? 1 : c.keysInBoth / c.keysInEither,
    typeAgreement: c.sharedPaths === 0 ? 0 : c.agreeingTypes / c.sharedPaths,
    errorAgreement: rehearsalIsError === actualIsError,
  };
}

/** Word tokens of a text, for the text fallback. Counted as a multiset. */
function tokens(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const t of text.match(/\S+/g) ?? []) {
    const n = (seen.get(t) ?? 0) + 1;
    seen.set(t, n);
    out.add(`${t}#${n}`);
  }
  return out;
}

/** Scores when at least one side is text: exact match and word-token F1. */
export function textScores(
  rehearsal: string,
  actual: string,
  rehearsalIsError: boolean,
  actualIsError: boolean,
): FidelityScores {
  return {
    exactMatch: rehearsal === actual,
    fieldF1: setF1(tokens(rehearsal), tokens(actual)),
    keyJaccard: null,
    typeAgreement: null,
    errorAgreement: rehearsalIsError === actualIsError,
  };
}

/** The text a response shows when compared as text. */
export function responseText(v: ResponseValue): string {
  return v.kind === 'text' ? v.text : canonicalJson(v.value, { indent: 2 });
}
