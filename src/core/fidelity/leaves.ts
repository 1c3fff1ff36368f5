import { canonicalJson, canonicalNumber } from '../base/canonicalJson';
import type { JsonType, JsonValue } from '../base/json';
import { jsonType } from '../base/json';
import { formatKeySegment, MAX_PATH_DEPTH } from './jsonPath';

/**
 * The paths of a JSON value: the sets the fidelity scores are defined on (field F1 over `leaves`,
 * key Jaccard over `keys`, type agreement over `types`). `jsonScores` computes the same numbers
 * without building these sets; this is the readable definition, and what tests check it against.
 */
export interface PathIndex {
  /** `path=value` of every leaf (primitives, empty arrays and objects, subtrees at {@link MAX_PATH_DEPTH}). */
  leaves: Set<string>;
  /** Every path below the root with array indices generalised (`$.items[*].sku`): the value's schema. */
  keys: Set<string>;
  /** The JSON type at every exact path, root included. */
  types: Map<string, JsonType>;
}

interface Visit {
  v: JsonValue;
  /** The exact path, as formatJsonPath writes it. */
  path: string;
  /** The path with indices generalised, as formatSchemaPath writes it. */
  schema: string;
  depth: number;
}

/** The canonical text of a leaf, without the set-up cost of a full canonicalJson call for scalars. */
function leafText(v: JsonValue): string {
  if (v === null) return 'null';
  if (typeof v === 'number') return canonicalNumber(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return canonicalJson(v); // an empty container, or a subtree at the depth bound
}

/**
 * Walks a value once (iteratively) and indexes its paths. Paths are extended step by step from
 * their parent's rather than formatted from segments at every node: a 1 MB response has ~100,000
 * nodes.
 */
export function indexPaths(value: JsonValue): PathIndex {
  const index: PathIndex = { leaves: new Set(), keys: new Set(), types: new Map() };
  const keyText = new Map<string, string>(); // responses repeat the same keys many times
  const stack: Visit[] = [{ v: value, path: '$', schema: '$', depth: 0 }];
  while (stack.length) {
    const { v, path, schema, depth } = stack.pop()!;
    const type = jsonType(v);
    index.types.set(path, type);
    if (depth) index.keys.add(schema);
    const followed = depth < MAX_PATH_DEPTH; // deeper subtrees count as one leaf
    if (followed && type === 'array' && (v as JsonValue[]).length) {
      const items = v as JsonValue[];
      const childSchema = schema + '[*]';
      for (let i = 0; i < items.length; i++)
        stack.push({ v: items[i], path: `${path}[${i}]`, schema: childSchema, depth: depth + 1 });
    } else if (followed && type === 'object' && Object.keys(v as object).length) {
      for (const [k, c] of Object.entries(v as { [k: string]: JsonValue })) {
        let step = keyText.get(k);
        if (step === undefined) keyText.set(k, (step = formatKeySegment(k)));
        stack.push({ v: c, path: path + step, schema: schema + step, depth: depth + 1 });
      }
    } else {
      index.leaves.add(path + '=' + leafText(v));
    }
  }
  return index;
}
