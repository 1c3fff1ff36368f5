import { canonicalJson } from '../../base/canonicalJson';
import type { JsonValue } from '../../base/json';
import { isJsonObject } from '../../base/json';
import type { PathSegment } from '../../fidelity/jsonPath';
import { parseJsonPath } from '../../fidelity/jsonPath';
import type { ArgumentMatchers, Matcher } from '../format/taskFile';

/** A value looked up by path: `found` false when the path does not exist. */
export type Lookup = { found: true; value: JsonValue } | { found: false };

/** The value at `segments` inside `root`. */
export function valueAt(root: JsonValue, segments: readonly PathSegment[]): Lookup {
  let v: JsonValue = root;
  for (const s of segments) {
    if (typeof s === 'number' && Array.isArray(v) && s < v.length) v = v[s];
    else if (isJsonObject(v) && Object.prototype.hasOwnProperty.call(v, String(s)))
      v = v[String(s)];
    else return { found: false };
  }
  return { found: true, value: v };
}

/** Lowercases and collapses whitespace, so "Cancelled" matches "cancelled" across line breaks. */
export function normalizeText(s: string): string {
  return s.toLowerCase().replace(/\s+/g, ' ').trim();
}

function show(v: JsonValue): string {
  const t = canonicalJson(v);
  return t.length > 120 ? t.slice(0, 120) + '…' : t;
}

/** Applies one matcher; `detail` says why it failed. */
export function applyMatcher(m: Matcher, got: Lookup): { ok: boolean; detail?: string } {
  if (m.exists !== undefined) {
    return got.found === m.exists
      ? { ok: true }
      : {
          ok: false,
          detail: m.exists
            ? 'is absent'
            : `is present (${show((got as { value: JsonValue }).value)})`,
        };
  }
  if (!got.found) return { ok: false, detail: 'is absent' };
  const v = got.value;
  if (m.equals !== undefined) {
    return canonicalJson(v) === canonicalJson(m.equals)
      ? { ok: true }
      : { ok: false, detail: `is ${show(v)}, expected ${show(m.equals)}` };
  }
  if (m.oneOf !== undefined) {
    const c = canonicalJson(v);
    return m.oneOf.some((o) => canonicalJson(o) === c)
      ? { ok: true }
      : { ok: false, detail: `is ${show(v)}, expected one of ${show(m.oneOf)}` };
  }
  if (m.contains !== undefined) {
    const text = typeof v === 'string' ? v : canonicalJson(v);
    return normalizeText(text).includes(normalizeText(m.contains))
      ? { ok: true }
      : {
          ok: false,
          detail: `is ${show(v)}, which does not contain ${JSON.stringify(m.contains)}`,
        };
  }
  if (m.matches !== undefined) {
    const text = typeof v === 'string' ? v : canonicalJson(v);
    return new RegExp(m.matches).test(text)
      ? { ok: true }
      : { ok: false, detail: `is ${show(v)}, which does not match /${m.matches}/` };
  }
  return { ok: false, detail: 'has no matcher' };
}

/** Path segments of an argument-matcher key: a JSONPath, or a top-level argument name. */
export function argumentKeySegments(key: string): PathSegment[] {
  return key.startsWith('$') ? (parseJsonPath(key) ?? [key]) : [key];
}

/** True when all matchers hold on `args`; otherwise the first failure. */
export function matchArguments(
  matchers: ArgumentMatchers | undefined,
  args: JsonValue,
): { ok: boolean; detail?: string } {
  for (const [key, m] of Object.entries(matchers ?? {})) {
    const r = applyMatcher(m, valueAt(args, argumentKeySegments(key)));
    if (!r.ok) return { ok: false, detail: `${key} ${r.detail}` };
  }
  return { ok: true };
}
