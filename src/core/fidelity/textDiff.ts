import type { ChangeObject } from 'diff';
import { createTwoFilesPatch, diffLines, diffWordsWithSpace } from 'diff';

/** One run of a text diff: kept, added (only in the actual response) or removed (only in the rehearsal). */
export interface TextChange {
  value: string;
  added: boolean;
  removed: boolean;
}

/** Budget of a text diff; past it the texts are shown as replaced wholesale rather than diffed. */
const TIMEOUT_MS = 500;

function toChanges(
  changes: ChangeObject<string>[] | undefined,
  rehearsal: string,
  actual: string,
): TextChange[] {
  if (!changes) {
    return [
      { value: rehearsal, added: false, removed: true },
      { value: actual, added: true, removed: false },
    ];
  }
  return changes.map((c) => ({ value: c.value, added: !!c.added, removed: !!c.removed }));
}

/** Word diff of two texts (whitespace kept), bounded in time. */
export function wordDiff(rehearsal: string, actual: string): TextChange[] {
  return toChanges(
    diffWordsWithSpace(rehearsal, actual, { timeout: TIMEOUT_MS }),
    rehearsal,
    actual,
  );
}

/** Line diff of two texts, bounded in time. */
export function lineDiff(rehearsal: string, actual: string): TextChange[] {
  return toChanges(diffLines(rehearsal, actual, { timeout: TIMEOUT_MS }), rehearsal, actual);
}

/** A unified patch from the rehearsal to the actual response. */
export function unifiedDiff(rehearsal: string, actual: string, context = 3): string {
  const patch = createTwoFilesPatch('rehearsal', 'actual', rehearsal, actual, '', '', {
    context,
    timeout: TIMEOUT_MS,
  });
  return patch ?? '(the texts differ too much to diff in time; showing both is clearer)';
}
