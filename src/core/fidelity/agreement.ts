import { canonicalJson } from '../base/canonicalJson';
import type { JsonValue } from '../base/json';
import { jsonType } from '../base/json';
import { MAX_PATH_DEPTH } from './jsonPath';

/**
 * The counts behind the JSON fidelity scores, in terms of the path sets of {@link indexPaths}:
 * leaves of each side and in common, key (schema) paths of each side and in common, paths present
 * in both and those whose types agree.
 */
export interface AgreementCounts {
  rehearsalLeaves: number;
  actualLeaves: number;
  commonLeaves: number;
  /** Schema paths (indices generalised) in either side, and in both. */
  keysInEither: number;
  keysInBoth: number;
  sharedPaths: number;
  agreeingTypes: number;
}

/** A node of the schema-path trie both sides are walked into; `seen` has bit 1 for the rehearsal, 2 for the actual side. */
class SchemaNode {
  seen = 0;
  keys: Map<string, SchemaNode> | undefined;
  items: SchemaNode | undefined;

  key(k: string): SchemaNode {
    this.keys ??= new Map();
    let n = this.keys.get(k);
    if (!n) this.keys.set(k, (n = new SchemaNode()));
    return n;
  }

  item(): SchemaNode {
    return (this.items ??= new SchemaNode());
  }
}

interface Visit {
  r: JsonValue | undefined;
  a: JsonValue | undefined;
  node: SchemaNode;
  depth: number;
}

const REHEARSAL = 1;
const ACTUAL = 2;

/** True when a value is a leaf of the path index at this depth (scalar, empty, or at the depth bound). */
function isLeaf(v: JsonValue, depth: number): boolean {
  if (v === null || typeof v !== 'object') return true;
  if (depth >= MAX_PATH_DEPTH) return true;
  return Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0;
}

/** Two leaves at the same path are one common leaf when their canonical texts agree. */
function sameLeaf(r: JsonValue, a: JsonValue): boolean {
  if (r === null || typeof r !== 'object' || a === null || typeof a !== 'object') return r === a; // -0 === 0, as canonically
  if (Array.isArray(r) !== Array.isArray(a)) return false;
  return canonicalJson(r) === canonicalJson(a); // empty containers, or subtrees at the depth bound
}

function own(o: { [k: string]: JsonValue }, k: string): JsonValue | undefined {
  return Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined;
}

/**
 * Walks both values at once and counts what the scores need, without writing out a single path:
 * the same numbers as intersecting the sets of {@link indexPaths}, several times faster on large
 * responses (a 1 MB response has ~100,000 paths).
 */
export function countAgreement(rehearsal: JsonValue, actual: JsonValue): AgreementCounts {
  const counts: AgreementCounts = {
    rehearsalLeaves: 0,
    actualLeaves: 0,
    commonLeaves: 0,
    keysInEither: 0,
    keysInBoth: 0,
    sharedPaths: 0,
    agreeingTypes: 0,
  };
  const root = new SchemaNode();
  const stack: Visit[] = [{ r: rehearsal, a: actual, node: root, depth: 0 }];
  const expand = (v: JsonValue, side: 'r' | 'a', node: SchemaNode, depth: number) =>
    pushOneSide(stack, v, side, node, depth);
  while (stack.length) {
    const { r, a, node, depth } = stack.pop()!;
    if (r !== undefined) node.seen |= REHEARSAL;
    if (a !== undefined) node.seen |= ACTUAL;
    const rLeaf = r !== undefined && isLeaf(r, depth);
    const aLeaf = a !== undefined && isLeaf(a, depth);
    if (rLeaf) counts.rehearsalLeaves++;
    if (aLeaf) counts.actualLeaves++;
    if (r === undefined || a === undefined) {
      if (r !== undefined && !rLeaf) expand(r, 'r', node, depth + 1);
      if (a !== undefined && !aLeaf) expand(a, 'a', node, depth + 1);
      continue;
    }
    counts.sharedPaths++;
    const sameType = jsonType(r) === jsonType(a);
    if (sameType) counts.agreeingTypes++;
    if (rLeaf && aLeaf) {
      if (sameLeaf(r, a)) counts.commonLeaves++;
    } else if (sameType && !rLeaf && !aLeaf) {
      pushSharedChildren(stack, r, a, node, depth + 1);
    } else {
      if (!rLeaf) expand(r, 'r', node, depth + 1);
      if (!aLeaf) expand(a, 'a', node, depth + 1);
    }
  }
  countKeyPaths(root, counts);
  return counts;
}

/** Pushes the children of a container that only one side has (`side`) onto the walk's stack. */
function pushOneSide(
  stack: Visit[],
  v: JsonValue,
  side: 'r' | 'a',
  node: SchemaNode,
  depth: number,
): void {
  if (Array.isArray(v)) {
    const child = node.item();
    for (const c of v)
      stack.push(
        side === 'r'
          ? { r: c, a: undefined, node: child, depth }
          : { r: undefined, a: c, node: child, depth },
      );
  } else {
    for (const [k, c] of Object.entries(v as { [k: string]: JsonValue })) {
      stack.push(
        side === 'r'
          ? { r: c, a: undefined, node: node.key(k), depth }
          : { r: undefined, a: c, node: node.key(k), depth },
      );
    }
  }
}

/** Pushes the children of two containers of one kind (both arrays or both objects): they share paths. */
function pushSharedChildren(
  stack: Visit[],
  r: JsonValue,
  a: JsonValue,
  node: SchemaNode,
  depth: number,
): void {
  if (Array.isArray(r)) {
    const ra = r;
    const aa = a as JsonValue[];
    const child = node.item();
    for (let i = 0; i < Math.max(ra.length, aa.length); i++)
      stack.push({ r: ra[i], a: aa[i], node: child, depth });
  } else {
    const ro = r as { [k: string]: JsonValue };
    const ao = a as { [k: string]: JsonValue };
    for (const k of Object.keys(ro))
      stack.push({ r: ro[k], a: own(ao, k), node: node.key(k), depth });
    for (const k of Object.keys(ao))
      if (own(ro, k) === undefined)
        stack.push({ r: undefined, a: ao[k], node: node.key(k), depth });
  }
}

/** Counts the key paths (every schema node below the root), and those both sides have. */
function countKeyPaths(root: SchemaNode, counts: AgreementCounts): void {
  const nodes: SchemaNode[] = [];
  const pushChildren = (n: SchemaNode) => {
    if (n.items) nodes.push(n.items);
    if (n.keys) for (const c of n.keys.values()) nodes.push(c);
  };
  pushChildren(root);
  while (nodes.length) {
    const n = nodes.pop()!;
    counts.keysInEither++;
    if (n.seen === (REHEARSAL | ACTUAL)) counts.keysInBoth++;
    pushChildren(n);
  }
}
