// A JSON Schema's statement of the bounds a loader enforces (issue 39): where a number's name
// (`$.checks[i].weight`) lands in the schema, what the schema says there, and the schema with the
// loader's bounds written in (UPDATE_GOLDENS=1 rewrites a schema file so).
import type { OutsideNumberSpec } from '../../src/core/base/numbers';
import { EVERY_ITEM, numberNameSteps } from '../../src/core/base/numberPlaces';

type SchemaNode = Record<string, unknown>;

function isNode(v: unknown): v is SchemaNode {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `#/definitions/x` inside `root`. */
function resolveRef(root: SchemaNode, ref: string): SchemaNode {
  let node: unknown = root;
  for (const key of ref.replace(/^#\//, '').split('/')) node = isNode(node) ? node[key] : undefined;
  if (!isNode(node)) throw new Error(`the schema's $ref ${ref} points at nothing`);
  return node;
}

/** The node itself, its `$ref` target and its `oneOf`/`anyOf`/`allOf` branches, flattened. */
function alternatives(root: SchemaNode, node: SchemaNode): SchemaNode[] {
  const out: SchemaNode[] = [node];
  if (typeof node['$ref'] === 'string')
    out.push(...alternatives(root, resolveRef(root, node['$ref'])));
  for (const key of ['oneOf', 'anyOf', 'allOf'])
    if (Array.isArray(node[key]))
      for (const branch of node[key] as unknown[])
        if (isNode(branch)) out.push(...alternatives(root, branch));
  return out;
}

/**
 * The schema nodes that describe the value at a number's name: every branch of a `oneOf` that
 * has the field (a check's `weight` is in each kind of check). Empty when the schema has no place
 * for it.
 */
export function schemaNodesAt(root: SchemaNode, name: string): SchemaNode[] {
  const steps = numberNameSteps(name);
  if (!steps) throw new Error(`${name} is not a file's JSONPath`);
  let nodes = [root];
  for (const step of steps) {
    const next: SchemaNode[] = [];
    for (const node of nodes.flatMap((n) => alternatives(root, n))) {
      const child =
        step === EVERY_ITEM
          ? node['items']
          : (node['properties'] as SchemaNode | undefined)?.[step];
      if (isNode(child)) next.push(child);
    }
    nodes = next;
  }
  // A field written as a $ref (or a oneOf) is described by the nodes that carry its type.
  return nodes.flatMap((n) => alternatives(root, n)).filter((n) => 'type' in n);
}

/** What a schema node must say for `spec`: the keywords and their values. */
export function boundKeywords(spec: OutsideNumberSpec): Record<string, number> {
  return {
    [spec.minExcluded ? 'exclusiveMinimum' : 'minimum']: spec.min,
    [spec.maxExcluded ? 'exclusiveMaximum' : 'maximum']: spec.max,
  };
}

const BOUND_WORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];

/** The bound keywords a node states, the others absent. */
function statedBounds(node: SchemaNode): Record<string, unknown> {
  return Object.fromEntries(BOUND_WORDS.filter((k) => k in node).map((k) => [k, node[k]]));
}

/**
 * Each of `specs` that `schema` does not state as the loader enforces it, as one line (the field,
 * what the loader takes, what the schema says); empty when they agree.
 */
export function schemaBoundFaults(
  schema: SchemaNode,
  specs: readonly OutsideNumberSpec[],
): string[] {
  const faults: string[] = [];
  for (const spec of specs) {
    const nodes = schemaNodesAt(schema, spec.name);
    if (nodes.length === 0) faults.push(`${spec.name}: the schema has no place for it`);
    const want = boundKeywords(spec);
    for (const node of nodes) {
      const stated = statedBounds(node);
      if (!sameBounds(stated, want))
        faults.push(
          `${spec.name}: the loader takes ${JSON.stringify(want)}, the schema says ${JSON.stringify(stated)}`,
        );
      const types = ([] as unknown[]).concat(node['type'] ?? []);
      if (spec.integer && !types.includes('integer'))
        faults.push(
          `${spec.name}: the loader takes whole numbers, the schema's type is ${JSON.stringify(node['type'])}`,
        );
    }
  }
  return faults;
}

function sameBounds(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => a[k] === b[k]);
}

/** `schema` with each of `specs` written where its name lands (a copy; other bounds removed there). */
export function withSchemaBounds<T>(schema: T, specs: readonly OutsideNumberSpec[]): T {
  const copy = structuredClone(schema) as SchemaNode;
  for (const spec of specs)
    for (const node of schemaNodesAt(copy, spec.name)) {
      for (const k of BOUND_WORDS) delete node[k];
      const rest = Object.entries(node);
      for (const k of Object.keys(node)) delete node[k];
      // The bounds go right after "type", where people read them.
      for (const [k, v] of rest) {
        node[k] = v;
        if (k === 'type') Object.assign(node, boundKeywords(spec));
      }
      if (!('type' in node)) Object.assign(node, boundKeywords(spec));
    }
  return copy as T;
}
