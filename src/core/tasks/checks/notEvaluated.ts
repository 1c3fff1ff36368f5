import type { CheckVerdict } from '../../trace/format/schema';

/** Checks of one kind that were not evaluated, for one reason (`passed: null`). */
export interface NotEvaluatedChecks {
  kind: CheckVerdict['kind'];
  /** Why, without one check's particulars, e.g. `the judge's verdict is not {"answer": boolean}`. */
  reason: string;
  /** The first check's detail in full, e.g. "not evaluated: an imagined trajectory has no real state". */
  detail: string;
  count: number;
  /** The checks' details differ in their particulars (a verdict's text, an error): `detail` is the first. */
  varied?: true;
}

/**
 * The reason of a "not evaluated" detail, without the particulars of one check: the text after
 * `not evaluated: `, less a closing parenthetical (the judge's text, the error a request met), so
 * that checks that failed alike are counted together.
 */
export function notEvaluatedReason(detail: string | undefined): string {
  const text = (detail ?? '').replace(/^not evaluated(: )?/, '').trim();
  const open = text.indexOf(' (');
  const reason = open > 0 && text.endsWith(')') ? text.slice(0, open) : text;
  return reason || 'no reason recorded';
}

/** The particulars {@link notEvaluatedReason} leaves out (the closing parenthetical's text), if any. */
export function notEvaluatedParticulars(detail: string): string | undefined {
  const text = detail.replace(/^not evaluated(: )?/, '').trim();
  const open = text.indexOf(' (');
  return open > 0 && text.endsWith(')') ? text.slice(open + 2, -1) : undefined;
}

/** Adds the checks not evaluated among `checks` to `groups`, one group per kind and reason. */
export function tallyNotEvaluated(
  groups: NotEvaluatedChecks[],
  checks: readonly CheckVerdict[] | undefined,
): NotEvaluatedChecks[] {
  for (const c of checks ?? []) {
    if (c.passed !== null) continue;
    const detail = c.detail ?? 'not evaluated';
    const reason = notEvaluatedReason(detail);
    const seen = groups.find((g) => g.kind === c.kind && g.reason === reason);
    if (!seen) groups.push({ kind: c.kind, reason, detail, count: 1 });
    else {
      seen.count++;
      if (seen.detail !== detail) seen.varied = true;
    }
  }
  return groups;
}
