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
  // The path as a chain to the parent: segments are only written out for the few paths that differ.
  parent: WorkItem | undefined;
  segment: PathSegment;
  depth: number;
}

function segmentsOf(item: WorkItem): PathSegment[] {
  const segments: PathSegment[] = new Array(item.depth);
  for (let at: WorkItem | undefined = item; at && at.parent; at = at.parent)
    segments[at.depth - 1] = at.segment;
  return segments;
}

function entry(kind: DiffKind, item: WorkItem): DiffEntry {
  const segments = segmentsOf(item);
  const e: DiffEntry = { kind, path: formatJsonPath(segments), segments };
  if (item.r !== undefined) e.rehearsal = item.r;
  if (item.a !== undefined) e.actual = item.a;
  return e;
}

/**
 * Structural diff of two JSON values by path: objects by key, arrays by index. Entries come in
 * document order (keys sorted). Iterative, so deep documents cannot overflow the stack; below
 * {@link MAX_PATH_DEPTH} a differing subtree is one `changed` entry.
 */
export function structuralDiff(rehearsal: JsonValue, actual: JsonValue): DiffEntry[] {
  const out: DiffEntry[] = [];
  const stack: WorkItem[] = [{ r: rehearsal, a: actual, parent: undefined, segment: '', depth: 0 }];
  while (stack.length) {
    const item = stack.pop()!;
    const { r, a, depth } = item;
    if (r === undefined) {
      out.push(entry('added', item));
      continue;
    }
    if (a === undefined) {
      out.push(entry('removed', item));
      continue;
    }
    const type = jsonType(r);
    if (type !== jsonType(a)) {
      out.push(entry('typeChanged', item));
      continue;
    }
    if ((type === 'object' || type === 'array') && depth >= MAX_PATH_DEPTH) {
      // Too deep to follow path by path: the subtrees are compared whole.
      if (canonicalJson(r) !== canonicalJson(a)) out.push(entry('changed', item));
    } else if (type === 'object') {
      const ro = r as { [k: string]: JsonValue };
      const ao = a as { [k: string]: JsonValue };
      const keys = Object.keys(ro);
      for (const k of Object.keys(ao))
        if (!Object.prototype.hasOwnProperty.call(ro, k)) keys.push(k);
      keys.sort(compareKeys);
      // Pushed in reverse, so that entries come out in document order.
      for (let i = keys.length - 1; i >= 0; i--)
        stack.push({
          r: own(ro, keys[i]),
          a: own(ao, keys[i]),
          parent: item,
          segment: keys[i],
          depth: depth + 1,
        });
    } else if (type === 'array') {
      const ra = r as JsonValue[];
      const aa = a as JsonValue[];
      for (let i = Math.max(ra.length, aa.length) - 1; i >= 0; i--)
        stack.push({ r: ra[i], a: aa[i], parent: item, segment: i, depth: depth + 1 });
    } else if (!samePrimitive(r, a)) {
      out.push(entry('changed', item));
    }
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
