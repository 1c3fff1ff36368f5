import { canonicalJson } from '../base/canonicalJson';
import type { JsonType, JsonValue } from '../base/json';
import { jsonType } from '../base/json';
import type { PathSegment } from './jsonPath';
import { formatJsonPath, formatSchemaPath, MAX_PATH_DEPTH } from './jsonPath';

/** The paths of a JSON value, gathered once for scoring. */
export interface PathIndex {
  /** `path=value` of every leaf (primitives, empty arrays and objects, subtrees at {@link MAX_PATH_DEPTH}). */
  leaves: Set<string>;
  /** Every path below the root with array indices generalised (`$.items[*].sku`): the value's schema. */
  keys: Set<string>;
  /** The JSON type at every exact path, root included. */
  types: Map<string, JsonType>;
}

/** Walks a value once (iteratively) and indexes its paths. */
export function indexPaths(value: JsonValue): PathIndex {
  const index: PathIndex = { leaves: new Set(), keys: new Set(), types: new Map() };
  const stack: { v: JsonValue; segments: PathSegment[] }[] = [{ v: value, segments: [] }];
  while (stack.length) {
    const { v, segments } = stack.pop()!;
    const path = formatJsonPath(segments);
    const type = jsonType(v);
    index.types.set(path, type);
    if (segments.length) index.keys.add(formatSchemaPath(segments));
    const followed = segments.length < MAX_PATH_DEPTH; // deeper subtrees count as one leaf
    if (followed && type === 'array' && (v as JsonValue[]).length) {
      (v as JsonValue[]).forEach((c, i) => stack.push({ v: c, segments: [...segments, i] }));
    } else if (followed && type === 'object' && Object.keys(v as object).length) {
      for (const [k, c] of Object.entries(v as { [k: string]: JsonValue })) stack.push({ v: c, segments: [...segments, k] });
    } else {
      index.leaves.add(path + '=' + canonicalJson(v));
    }
  }
  return index;
}
