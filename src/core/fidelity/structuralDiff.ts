import { canonicalJson, compareKeys } from '../base/canonicalJson';
import type { JsonValue } from '../base/json';
import { jsonType } from '../base/json';
import type { PathSegment } from './jsonPath';
import { formatJsonPath, MAX_PATH_DEPTH } from './jsonPath';

/**
 * How a JSON path differs between the rehearsal (left) and the actual response (right).
 * `added`: only in the actual response (the rehearsal missed it); `removed`: only in the rehearsal
 * (it invented it); `changed`: same type, other value; `typeChanged`: other JSON type.
 */
export type DiffKind = 'added' | 'removed' | 'changed' | 'typeChanged';

/** One difference of a structural diff. */
export interface DiffEntry {
  kind: DiffKind;
  /** JSONPath of the difference, e.g. `$.orders[0].status`. */
  path: string;
  segments: PathSegment[];
  /** The rehearsed value at the path (absent for `added`). */
  rehearsal?: JsonValue;
  /** The actual value at the path (absent for `removed`). */
  actual?: JsonValue;
}

interface WorkItem {
  r: JsonValue | undefined; // undefined: absent in the rehearsal
  a: JsonValue | undefined; // undefined: absent in the actual response
  segments: PathSegment[];
}

/**
 * Structural diff of two JSON values by path: objects by key, arrays by index. Entries come in
 * document order (keys sorted). Iterative, so deep documents cannot overflow the stack; below
 * {@link MAX_PATH_DEPTH} a differing subtree is one `changed` entry.
 */
export function structuralDiff(rehearsal: JsonValue, actual: JsonValue): DiffEntry[] {
  const out: DiffEntry[] = [];
  const stack: WorkItem[] = [{ r: rehearsal, a: actual, segments: [] }];
  while (stack.length) {
    const { r, a, segments } = stack.pop()!;
    if (r === undefined) { out.push({ kind: 'added', path: formatJsonPath(segments), segments, actual: a }); continue; }
    if (a === undefined) { out.push({ kind: 'removed', path: formatJsonPath(segments), segments, rehearsal: r }); continue; }
    const type = jsonType(r);
    if (type !== jsonType(a)) {
      out.push({ kind: 'typeChanged', path: formatJsonPath(segments), segments, rehearsal: r, actual: a });
      continue;
    }
    const children: WorkItem[] = [];
    if ((type === 'object' || type === 'array') && segments.length >= MAX_PATH_DEPTH) {
      // Too deep to follow path by path: the subtrees are compared whole.
      if (canonicalJson(r) !== canonicalJson(a)) out.push({ kind: 'changed', path: formatJsonPath(segments), segments, rehearsal: r, actual: a });
    } else if (type === 'object') {
      const ro = r as { [k: string]: JsonValue };
      const ao = a as { [k: string]: JsonValue };
      const keys = [...new Set([...Object.keys(ro), ...Object.keys(ao)])].sort(compareKeys);
      for (const k of keys) children.push({ r: own(ro, k), a: own(ao, k), segments: [...segments, k] });
    } else if (type === 'array') {
      const ra = r as JsonValue[];
      const aa = a as JsonValue[];
      for (let i = 0; i < Math.max(ra.length, aa.length); i++) children.push({ r: ra[i], a: aa[i], segments: [...segments, i] });
    } else if (!samePrimitive(r, a)) {
      out.push({ kind: 'changed', path: formatJsonPath(segments), segments, rehearsal: r, actual: a });
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]); // reversed: document order out
  }
  return out;
}

function own(o: { [k: string]: JsonValue }, k: string): JsonValue | undefined {
  return Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined;
}

function samePrimitive(r: JsonValue, a: JsonValue): boolean {
  return r === a; // -0 === 0 holds, and JSON has no NaN
}

/** Counts of a diff's entries by kind. */
export function summarizeDiff(entries: readonly DiffEntry[]): Record<DiffKind, number> {
  const counts: Record<DiffKind, number> = { added: 0, removed: 0, changed: 0, typeChanged: 0 };
  for (const e of entries) counts[e.kind]++;
  return counts;
}
