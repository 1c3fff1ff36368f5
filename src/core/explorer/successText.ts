/**
 * A run's success as every view says it (the Trace Explorer's run row, the notification when a run
 * ends, the summary's "of N graded"): successes over the graded episodes, and how many ended
 * ungraded (no checks, or a failure before grading), which count in neither.
 */
export function successText(successes: number, graded: number, ended: number): string {
  const ungraded = ended - graded;
  if (graded === 0) return `${ungraded} ungraded`;
  return `${successes}/${graded} success${ungraded > 0 ? ` · ${ungraded} ungraded` : ''}`;
}
