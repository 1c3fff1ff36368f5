/** One step of a JSON path: an object key or an array index. */
export type PathSegment = string | number;

/**
 * Fidelity follows paths at most this deep; a deeper subtree is compared as one whole value. Every
 * path is written out in full, so without a bound the work grows with the square of the depth: a
 * 40 kB response nested 10,000 deep would exhaust memory. Real tool responses stay far shallower.
 */
export const MAX_PATH_DEPTH = 100;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** One object key as a path step: `.name`, or `["odd key"]` when it is not an identifier. */
export function formatKeySegment(key: string): string {
  return IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** Formats a path as JSONPath: `$.orders[0].status`, `$["odd key"]`. */
export function formatJsonPath(segments: readonly PathSegment[]): string {
  let out = '$';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : formatKeySegment(s);
  return out;
}

/** The same path with array indices replaced by `[*]`: the shape a schema talks about. */
export function formatSchemaPath(segments: readonly PathSegment[]): string {
  // Built directly: rewriting a formatted path would also rewrite keys that contain `[-1]`.
  let out = '$';
  for (const s of segments) out += typeof s === 'number' ? '[*]' : formatKeySegment(s);
  return out;
}

/**
 * Parses a path written by {@link formatJsonPath} back into segments; undefined when the text is not
 * such a path (annotations carry paths typed or edited by people).
 */
export function parseJsonPath(text: string): PathSegment[] | undefined {
  if (!text.startsWith('$')) return undefined;
  const out: PathSegment[] = [];
  let i = 1;
  while (i < text.length) {
    if (text[i] === '.') {
      const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(text.slice(i + 1));
      if (!m) return undefined;
      out.push(m[0]);
      i += 1 + m[0].length;
    } else if (text[i] === '[') {
      const rest = text.slice(i + 1);
      const num = /^(\d+)\]/.exec(rest);
      if (num) {
        out.push(Number(num[1]));
        i += 1 + num[0].length;
        continue;
      }
      const str = /^("(?:[^"\\]|\\.)*")\]/.exec(rest);
      if (!str) return undefined;
      try {
        out.push(JSON.parse(str[1]) as string);
      } catch {
        return undefined;
      }
      i += 1 + str[0].length;
    } else return undefined;
  }
  return out;
}
