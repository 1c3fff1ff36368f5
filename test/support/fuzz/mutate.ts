import fc from 'fast-check';
import type { JsonValue } from '../../../src/core/base/json';

/**
 * Mutations of valid inputs for the fuzz targets: byte-level edits of text (insert, delete,
 * replace, truncate, duplicate a slice) and structural edits of JSON values (replace, delete or
 * retype a node anywhere in the tree, with hostile values among the replacements).
 */

/** Any UTF-16 code unit, lone surrogates included. */
export const codeUnits = fc.string({
  unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  maxLength: 24,
});

/** Pieces that hit parser edge cases: tags, JSON punctuation, odd numbers, control and unusual characters. */
const PIECES = [
  '\n',
  '\r\n',
  '\u0000',
  '\u2028',
  '\ufeff',
  '\ud800',
  '\udfff',
  '"',
  '\\',
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  'null',
  'true',
  '-0',
  '1e999',
  '1e-400',
  '<tool_call>',
  '</tool_call>',
  '<execution_result>',
  '</execution_result>',
  '<think>',
  '</think>',
  '"__proto__"',
  '"constructor"',
  '"type":"call.actual"',
  '"v":2',
  '"v":1',
  '"callId":"../../etc"',
  '"episodeId":"e1"',
  '"role":"tool"',
  '"role":"assistant"',
];

/** Text to insert: protocol and JSON pieces or arbitrary code units. */
export const insertion = fc.oneof(
  fc.constantFrom(...PIECES),
  codeUnits,
  fc.string({ unit: 'binary', maxLength: 12 }),
);

/** One edit of a text, positioned by a fraction of its length. */
type TextEdit =
  | { op: 'insert'; at: number; text: string }
  | { op: 'delete'; at: number; length: number }
  | { op: 'replace'; at: number; length: number; text: string }
  | { op: 'truncate'; at: number }
  | { op: 'duplicate'; at: number; length: number };

const fraction = fc.double({ min: 0, max: 1, noNaN: true });
const textEdit: fc.Arbitrary<TextEdit> = fc.oneof(
  fc.record({ op: fc.constant('insert' as const), at: fraction, text: insertion }),
  fc.record({
    op: fc.constant('delete' as const),
    at: fraction,
    length: fc.integer({ min: 1, max: 64 }),
  }),
  fc.record({
    op: fc.constant('replace' as const),
    at: fraction,
    length: fc.integer({ min: 1, max: 16 }),
    text: insertion,
  }),
  fc.record({ op: fc.constant('truncate' as const), at: fraction }),
  fc.record({
    op: fc.constant('duplicate' as const),
    at: fraction,
    length: fc.integer({ min: 1, max: 200 }),
  }),
);

function applyEdit(s: string, e: TextEdit): string {
  const at = Math.floor(e.at * s.length);
  switch (e.op) {
    case 'insert':
      return s.slice(0, at) + e.text + s.slice(at);
    case 'delete':
      return s.slice(0, at) + s.slice(at + e.length);
    case 'replace':
      return s.slice(0, at) + e.text + s.slice(at + e.length);
    case 'truncate':
      return s.slice(0, at);
    case 'duplicate':
      return s.slice(0, at + e.length) + s.slice(at, at + e.length) + s.slice(at + e.length);
  }
}

/** `text` with one to `max` random edits. */
export function mutatedText(text: string, max = 4): fc.Arbitrary<string> {
  return fc
    .array(textEdit, { minLength: 1, maxLength: max })
    .map((edits) => edits.reduce(applyEdit, text));
}

/** One of `texts`, with one to `max` random edits. */
export function mutatedTexts(texts: readonly string[], max = 4): fc.Arbitrary<string> {
  return fc.constantFrom(...texts).chain((t) => mutatedText(t, max));
}

/** An array nested `depth` deep around `inner`. */
export function nested(depth: number, inner: JsonValue = 1): JsonValue {
  let v: JsonValue = inner;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/**
 * Values that break naive code: prototype keys, odd numbers, huge strings, deep nesting. Made
 * fresh for each use, since later edits may change them in place.
 */
const HOSTILE: (() => JsonValue)[] = [
  () => null,
  () => '',
  () => 0,
  () => -1,
  () => 1.5,
  () => 1e308,
  () => -1e-308,
  () => Number.MAX_SAFE_INTEGER + 2,
  () => true,
  () => [],
  () => ({}),
  () => 'x'.repeat(70_000),
  () => '\ud800',
  () => '../../etc/passwd',
  () => '/etc/passwd',
  () => 'e1.t1.c1',
  () => JSON.parse('{"__proto__": {"polluted": true}}') as JsonValue,
  () => ({ constructor: { prototype: { polluted: true } } }),
  () => ({ toString: 'no' }),
  () => ({ hasOwnProperty: 1 }),
  () => nested(5_000),
  () => nested(100_000),
  () => ({ a: nested(5_000) }),
];

/** A replacement value: a generated JSON value or a hostile one. */
const replacement: fc.Arbitrary<JsonValue> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue> },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE).map((make) => make()) },
);

/** One structural edit, at the node numbered `at` (modulo the number of nodes). */
type JsonEdit =
  | { op: 'replace'; at: number; value: JsonValue }
  | { op: 'delete'; at: number }
  | { op: 'stringify'; at: number }
  | { op: 'wrap'; at: number };

const jsonEdit: fc.Arbitrary<JsonEdit> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('replace' as const), at: fc.nat(), value: replacement }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('stringify' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('wrap' as const), at: fc.nat() }) },
);

type Slot = { parent: JsonValue[] | { [k: string]: JsonValue }; key: string | number };

/** The slots of a value's nodes (the root excluded), at most `limit` of them, breadth first. */
function slots(root: JsonValue, limit = 2000): Slot[] {
  const out: Slot[] = [];
  const queue: JsonValue[] = [root];
  while (queue.length && out.length < limit) {
    const v = queue.shift() as JsonValue;
    if (Array.isArray(v))
      v.forEach((x, i) => {
        out.push({ parent: v, key: i });
        queue.push(x);
      });
    else if (v !== null && typeof v === 'object')
      for (const k of Object.keys(v)) {
        out.push({ parent: v, key: k });
        queue.push(v[k]);
      }
  }
  return out;
}

function applyJsonEdit(root: JsonValue, e: JsonEdit): JsonValue {
  const all = slots(root);
  if (all.length === 0) return e.op === 'replace' ? e.value : root;
  const { parent, key } = all[e.at % all.length];
  const get = () => (parent as Record<string | number, JsonValue>)[key];
  const set = (v: JsonValue) => {
    (parent as Record<string | number, JsonValue>)[key] = v;
  };
  switch (e.op) {
    case 'replace':
      set(e.value);
      break;
    case 'delete':
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
      break;
    case 'stringify': {
      // JSON.stringify throws on nesting deeper than its stack allows: leave such a node as it is.
      try {
        set(JSON.stringify(get()) ?? null);
      } catch {
        /* too deep */
      }
      break;
    }
    case 'wrap':
      set([get()]);
      break;
  }
  return root;
}

/** A deep copy of one of `values` with one to `max` structural edits. */
export function mutatedJson(values: readonly JsonValue[], max = 3): fc.Arbitrary<JsonValue> {
  return fc
    .tuple(fc.constantFrom(...values), fc.array(jsonEdit, { minLength: 1, maxLength: max }))
    .map(([value, edits]) => edits.reduce(applyJsonEdit, structuredClone(value)));
}
