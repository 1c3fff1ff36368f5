import type { Node as JsonNode, ParseError } from 'jsonc-parser';
import { parseTree } from 'jsonc-parser';
import type { PathSegment } from './jsonPath';
import { formatJsonPath } from './jsonPath';

/** Where the value at one JSON path sits in a JSON text: lines are 0-based, ends inclusive. */
export interface PathRange {
  path: string;
  /** Offset of the first character (an object member's key, or the value itself). */
  start: number;
  /** Offset just past the value. */
  end: number;
  startLine: number;
  endLine: number;
}

/**
 * The range of every JSON path of a JSON text (the canonical pretty JSON of a call's side), keyed by
 * the path as fidelity diffs write it (`$.orders[0].status`). An object member's range starts at its
 * key, so that highlighting it shows which field differs. Undefined when the text is not JSON.
 */
export function jsonPathRanges(text: string): Map<string, PathRange> | undefined {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false });
  if (!root || errors.length) return undefined;
  const lineStarts = lineStartOffsets(text);
  const lineOf = (offset: number) => lineAt(lineStarts, offset);
  const out = new Map<string, PathRange>();
  const add = (segments: PathSegment[], start: number, value: JsonNode) => {
    const end = value.offset + value.length;
    out.set(formatJsonPath(segments), {
      path: formatJsonPath(segments),
      start,
      end,
      startLine: lineOf(start),
      endLine: lineOf(Math.max(start, end - 1)),
    });
  };
  // Iterative: a deeply nested response must not overflow the stack.
  const stack: { node: JsonNode; segments: PathSegment[]; start: number }[] = [
    { node: root, segments: [], start: root.offset },
  ];
  while (stack.length) {
    const { node, segments, start } = stack.pop()!;
    add(segments, start, node);
    if (node.type === 'object') {
      for (const member of node.children ?? []) {
        const [key, value] = member.children ?? [];
        if (key && value)
          stack.push({
            node: value,
            segments: [...segments, String(key.value)],
            start: member.offset,
          });
      }
    } else if (node.type === 'array') {
      (node.children ?? []).forEach((item, i) =>
        stack.push({ node: item, segments: [...segments, i], start: item.offset }),
      );
    }
  }
  return out;
}

/** Offsets where each line of a text starts. */
export function lineStartOffsets(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** The 0-based line of an offset, given {@link lineStartOffsets}. */
export function lineAt(lineStarts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lineStarts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The range of a path, or of its nearest ancestor that exists in the text (a path the rehearsal
 * missed has no place in it; its parent does).
 */
export function nearestPathRange(
  ranges: ReadonlyMap<string, PathRange>,
  segments: readonly PathSegment[],
): PathRange | undefined {
  for (let n = segments.length; n >= 0; n--) {
    const found = ranges.get(formatJsonPath(segments.slice(0, n)));
    if (found) return found;
  }
  return undefined;
}

/**
 * The JSON path the cursor at `offset` names in a call's side: the innermost path whose range holds
 * it when that path starts on the cursor's line; else (the cursor in a line's indentation, or on the
 * punctuation after a value, where only an enclosing container holds it) the outermost path that
 * starts on that line, so that a cursor anywhere on `"status": "pending",` names `$.status`. `$`
 * when no path starts on the line (`{`, `}`), undefined when the text is not JSON.
 */
export function pathAtOffset(text: string, offset: number): string | undefined {
  const ranges = jsonPathRanges(text);
  if (!ranges) return undefined;
  const line = lineAt(lineStartOffsets(text), offset);
  let innermost: PathRange | undefined;
  let outermostOnLine: PathRange | undefined;
  for (const r of ranges.values()) {
    if (offset >= r.start && offset <= r.end)
      if (!innermost || r.end - r.start < innermost.end - innermost.start) innermost = r;
    if (r.startLine === line)
      if (!outermostOnLine || r.end - r.start > outermostOnLine.end - outermostOnLine.start)
        outermostOnLine = r;
  }
  const best = innermost?.startLine === line ? innermost : (outermostOnLine ?? innermost);
  return best?.path ?? '$';
}
