import { counted } from '../base/counted';
import type { FidelityScores } from './scores';

// The verdicts every view shows of a call and an episode (the Trace Explorer, the fidelity report,
// compare, the run summary and the Trajectory panel): one wording, one status, one place.

/** How a node should look: drives the icon and colour in any host. */
export type NodeStatus = 'ok' | 'mismatch' | 'error' | 'running' | 'pending' | 'info';

/** A node of the Trace Explorer, as plain data; hosts map it to their own tree items. */
/** What a call's verdict is read from (a trace index entry has these fields). */
export interface CallVerdictInput {
  rehearsal?: unknown;
  actual?: unknown;
  rehearsalError?: string;
  actualError?: string;
  comparable?: 'json' | 'text' | 'none';
  scores?: FidelityScores;
}

/** What an episode's outcome is read from (an ended episode of the trace index). */
export interface EpisodeVerdictInput {
  end?: {
    status: string;
    errorCode?: string;
    reward: number | null;
    success: boolean | null;
  };
}

/** A call's fidelity badge: the text shown beside the tool name and its status. */
export function fidelityBadge(call: CallVerdictInput): { text: string; status: NodeStatus } {
  if (call.rehearsalError) return { text: `parse error ${call.rehearsalError}`, status: 'error' };
  if (call.actualError) return { text: `tool error ${call.actualError}`, status: 'error' };
  if (!call.rehearsal || !call.actual)
    return { text: !call.rehearsal ? 'not rehearsed' : 'waiting for tool', status: 'pending' };
  if (!call.scores)
    return { text: call.comparable === 'none' ? 'not comparable' : 'not scored', status: 'info' };
  if (call.scores.exactMatch) return { text: 'exact', status: 'ok' };
  const errorState = call.scores.errorAgreement ? '' : ' · error state differs';
  return { text: `F1 ${call.scores.fieldF1.toFixed(2)}${errorState}`, status: 'mismatch' };
}

/** The mean scores of some calls, for tooltips: how many were scored, exact, and their mean field F1. */
export function scoreSummary(calls: readonly CallVerdictInput[]): string {
  const sum = scoreSum();
  calls.forEach(sum.add);
  return sum.text();
}

/** A {@link scoreSummary} built one call at a time (a run's calls are visited, not listed). */
export function scoreSum(): { add: (c: Readonly<CallVerdictInput>) => void; text: () => string } {
  let calls = 0,
    scored = 0,
    exact = 0,
    f1 = 0,
    parseErrors = 0;
  return {
    add: (c) => {
      calls++;
      if (c.rehearsalError) parseErrors++;
      if (!c.scores) return;
      scored++;
      if (c.scores.exactMatch) exact++;
      f1 += c.scores.fieldF1;
    },
    text: () =>
      scored === 0
        ? `${counted(calls, 'call')}, none scored`
        : `fidelity of ${counted(scored, 'scored call')}: exact ${exact}/${scored} · mean field F1 ${(f1 / scored).toFixed(2)}${parseErrors ? ` · ${counted(parseErrors, 'rehearsal parse error')}` : ''}`,
  };
}

/**
 * How an episode ended, in the words every view uses (the tree's rows, the episode pickers):
 * `running`, `failed (JSON_DECODE_ERROR)`, `success · reward 1.00`, `failure · reward 0.50`.
 */
export function episodeOutcome(ep: EpisodeVerdictInput): {
  description: string;
  status: NodeStatus;
} {
  if (!ep.end) return { description: 'running', status: 'running' };
  if (ep.end.status === 'failed' || ep.end.status === 'cancelled')
    return {
      description: `${ep.end.status}${ep.end.errorCode ? ` (${ep.end.errorCode})` : ''}`,
      status: 'error',
    };
  const reward = ep.end.reward === null ? '' : ` · reward ${ep.end.reward.toFixed(2)}`;
  return {
    description: `${ep.end.success === null ? 'ungraded' : ep.end.success ? 'success' : 'failure'}${reward}${ep.end.status === 'limit' ? ' · hit a limit' : ''}`,
    status: ep.end.success ? 'ok' : ep.end.success === null ? 'info' : 'mismatch',
  };
}
