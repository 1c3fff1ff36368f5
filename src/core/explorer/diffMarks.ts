import type { Annotation } from '../annotations/schema';
import { parseJsonPath } from '../fidelity/jsonPath';
import type { PathRange } from '../fidelity/pathRanges';
import { jsonPathRanges, nearestPathRange } from '../fidelity/pathRanges';
import type { DiffKind } from '../fidelity/structuralDiff';
import type { CallSideDocument } from './callDocument';
import type { CallView } from '../trace/index/callView';
import { callSideDocument } from './callDocument';

/** One side of a call's diff. */
export type CallSide = 'rehearsal' | 'actual';

/** A differing JSON path, placed on one side of a call's diff. */
export interface DiffMark {
  path: string;
  kind: DiffKind;
  side: CallSide;
  range: PathRange;
  /** The path is not in this side's text: the range is that of its nearest ancestor. */
  ancestor: boolean;
}

/** An annotation placed on one side of a call's diff. */
export interface AnnotationMark {
  annotation: Annotation;
  side: CallSide;
  range: PathRange;
}

/** The two sides of a call's diff with what to highlight on each. */
export interface CallDiffMarks {
  documents: Record<CallSide, CallSideDocument>;
  /** Highlights: each differing path on the side(s) where it is (removed: rehearsal; added: actual; changed: both). */
  marks: DiffMark[];
  /** Where to offer marking each differing path, once per path: on the rehearsal side unless the rehearsal lacks it. */
  lenses: DiffMark[];
}

/**
 * Maps a call's structural diff to line ranges of the canonical pretty JSON of both sides, for
 * decorations and CodeLenses in the native diff editor. Calls that are not compared as JSON have no marks.
 */
export function callDiffMarks(view: CallView): CallDiffMarks {
  const documents = {
    rehearsal: callSideDocument(view, 'rehearsal'),
    actual: callSideDocument(view, 'actual'),
  };
  const result: CallDiffMarks = { documents, marks: [], lenses: [] };
  if (view.comparison.comparable !== 'json') return result;
  const ranges = {
    rehearsal: jsonPathRanges(documents.rehearsal.text),
    actual: jsonPathRanges(documents.actual.text),
  };
  for (const entry of view.comparison.diff) {
    const sides: CallSide[] =
      entry.kind === 'added'
        ? ['actual']
        : entry.kind === 'removed'
          ? ['rehearsal']
          : ['rehearsal', 'actual'];
    for (const side of sides) {
      const range = ranges[side]?.get(entry.path);
      if (range)
        result.marks.push({ path: entry.path, kind: entry.kind, side, range, ancestor: false });
    }
    const lensSide: CallSide = entry.kind === 'added' ? 'actual' : 'rehearsal';
    const exact = ranges[lensSide]?.get(entry.path);
    if (exact)
      result.lenses.push({
        path: entry.path,
        kind: entry.kind,
        side: lensSide,
        range: exact,
        ancestor: false,
      });
  }
  return result;
}

/**
 * Places annotations on the diff: at their path on the rehearsal side (or the actual side for a path
 * only the actual response has), at the nearest ancestor when the path is gone, and at the first
 * line for annotations of the whole call.
 */
export function annotationMarks(
  documents: Record<CallSide, CallSideDocument>,
  annotations: readonly Annotation[],
): AnnotationMark[] {
  const ranges = {
    rehearsal:
      documents.rehearsal.language === 'json'
        ? jsonPathRanges(documents.rehearsal.text)
        : undefined,
    actual:
      documents.actual.language === 'json' ? jsonPathRanges(documents.actual.text) : undefined,
  };
  const firstLine = (side: CallSide): PathRange => {
    const text = documents[side].text;
    const end = Math.max(0, text.indexOf('\n'));
    return { path: '$', start: 0, end, startLine: 0, endLine: 0 };
  };
  return annotations.map((annotation) => {
    const segments = annotation.path ? parseJsonPath(annotation.path) : undefined;
    if (segments) {
      const exactRehearsal = ranges.rehearsal?.get(annotation.path!);
      if (exactRehearsal) return { annotation, side: 'rehearsal', range: exactRehearsal };
      const exactActual = ranges.actual?.get(annotation.path!);
      if (exactActual) return { annotation, side: 'actual', range: exactActual };
      const near = ranges.rehearsal ? nearestPathRange(ranges.rehearsal, segments) : undefined;
      if (near) return { annotation, side: 'rehearsal', range: near };
    }
    return { annotation, side: 'rehearsal', range: firstLine('rehearsal') };
  });
}
