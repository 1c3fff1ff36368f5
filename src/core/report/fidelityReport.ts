import { compareIds } from '../trace/format/ids';
import type { FidelityScores } from '../fidelity/scores';
import type { SkippedLine } from '../trace/format/reader';
import { readTrace } from '../trace/format/reader';
import type {
  CallActualEvent,
  CallRehearsalEvent,
  CheckVerdict,
  PolicyInfo,
  RunMode,
  TraceEvent,
} from '../trace/format/schema';
import { compareCall } from '../trace/index/callView';
import type { CallComparison } from '../fidelity/compare';
import type { AnnotationKind } from '../annotations/schema';
import { suggestedCallKind } from '../annotations/suggest';
import type { NotEvaluatedChecks } from '../tasks/checks/notEvaluated';
import { tallyNotEvaluated } from '../tasks/checks/notEvaluated';

/** Means of the fidelity scores over compared calls (`null`: nothing to average). */
export interface ScoreMeans {
  compared: number;
  exactMatch: number | null;
  fieldF1: number | null;
  keyJaccard: number | null;
  typeAgreement: number | null;
  errorAgreement: number | null;
}

/** Fidelity of one tool. */
export interface ToolReport extends ScoreMeans {
  tool: string;
  calls: number;
  rehearsalParseErrors: number;
}

/** A task a trace's episodes played, with its first user message. */
export interface TaskSeen {
  taskId: string;
  instruction?: string;
}

/** One trace as the report saw it. */
export interface TraceSummary {
  file: string;
  runId?: string;
  mode?: RunMode;
  /** The policy that played the run (its run event). */
  policy?: PolicyInfo;
  /** The tasks its episodes played, in order, at most {@link MAX_TASKS_LISTED}; `taskCount` counts all. */
  tasks: TaskSeen[];
  taskCount: number;
  events: number;
  /** The first MAX_SKIPPED_KEPT skipped lines; `skippedCount` counts them all. */
  skipped: SkippedLine[];
  skippedCount: number;
}

export type { NotEvaluatedChecks } from '../tasks/checks/notEvaluated';

/** Outcome of a set of episodes: how many, how many graded and successful, their mean reward. */
export interface EpisodeTally {
  episodes: number;
  /** Episodes graded with success true / graded episodes. */
  successes: number;
  graded: number;
  /** Mean reward over graded episodes; each episode's reward counts only its evaluated checks. */
  meanReward: number | null;
  /** Checks that were not evaluated, so that a reward is never read as covering them. */
  notEvaluated: NotEvaluatedChecks[];
}

/** At most this many tasks are kept per trace in {@link TraceSummary.tasks}. */
export const MAX_TASKS_LISTED = 20;

/** One call of a report's call list (`rehearse report --calls`). */
export interface CallRow {
  file: string;
  callId: string;
  tool: string;
  /** What happened: `exact`, `mismatch`, `parse error CODE`, `tool error CODE`, `not compared`. */
  outcome: string;
  fieldF1: number | null;
  /**
   * The rehearsal missed (did not parse, or differs from the actual response): the kind of fidelity
   * error a person would most likely mark, as the editor preselects it. Absent otherwise.
   */
  suggestedKind?: AnnotationKind;
}

/**
 * The fidelity report of one or more traces. Its episode figures ({@link EpisodeTally}) are those of
 * the episodes that are the runs' result: every episode but private rehearsal's imagined ones, which
 * are tallied apart in `rehearsals`.
 */
export interface FidelityReport extends EpisodeTally {
  traces: TraceSummary[];
  /** Private rehearsal's imagined episodes (they condense into the committed episode's memory); null when none. */
  rehearsals: EpisodeTally | null;
  /**
   * Episodes that ended on an error before the policy's first turn (a server that would not start, a
   * tool list that clashes): nothing was played, so no score says anything about the policy. By error
   * code, with the first message of each.
   */
  notPlayed: { code: string; count: number; message: string }[];
  turns: number;
  /** Turns whose tool calls parsed (or final answers) / all turns. */
  actParseValid: number;
  calls: number;
  rehearsed: number;
  /** Rehearsals whose result parsed / rehearsals. */
  rehearsalParseValid: number;
  withActual: number;
  parseErrors: { act: Record<string, number>; rehearsal: Record<string, number> };
  actualErrors: Record<string, number>;
  overall: ScoreMeans;
  perTool: ToolReport[];
  /** Every call, least faithful first; only when asked for. */
  callList?: CallRow[];
}

class EpisodeAccumulator {
  private tally: EpisodeTally = {
    episodes: 0,
    successes: 0,
    graded: 0,
    meanReward: null,
    notEvaluated: [],
  };
  private rewardSum = 0;
  private rewardCount = 0;

  started(): void {
    this.tally.episodes++;
  }

  ended(
    success: boolean | null,
    reward: number | null,
    checks: readonly CheckVerdict[] | undefined,
  ): void {
    if (success !== null) {
      this.tally.graded++;
      if (success) this.tally.successes++;
    }
    if (reward !== null) {
      this.rewardSum += reward;
      this.rewardCount++;
    }
    tallyNotEvaluated(this.tally.notEvaluated, checks);
  }

  result(): EpisodeTally {
    return {
      ...this.tally,
      meanReward: this.rewardCount ? this.rewardSum / this.rewardCount : null,
    };
  }
}

class MeanAccumulator {
  private n = 0;
  private sums = { exactMatch: 0, fieldF1: 0, keyJaccard: 0, typeAgreement: 0, errorAgreement: 0 };
  private counts = { keyJaccard: 0, typeAgreement: 0 };

  add(s: FidelityScores): void {
    this.n++;
    this.sums.exactMatch += s.exactMatch ? 1 : 0;
    this.sums.fieldF1 += s.fieldF1;
    this.sums.errorAgreement += s.errorAgreement ? 1 : 0;
    if (s.keyJaccard !== null) {
      this.sums.keyJaccard += s.keyJaccard;
      this.counts.keyJaccard++;
    }
    if (s.typeAgreement !== null) {
      this.sums.typeAgreement += s.typeAgreement;
      this.counts.typeAgreement++;
    }
  }

  means(): ScoreMeans {
    const mean = (sum: number, n: number) => (n ? sum / n : null);
    return {
      compared: this.n,
      exactMatch: mean(this.sums.exactMatch, this.n),
      fieldF1: mean(this.sums.fieldF1, this.n),
      keyJaccard: mean(this.sums.keyJaccard, this.counts.keyJaccard),
      typeAgreement: mean(this.sums.typeAgreement, this.counts.typeAgreement),
      errorAgreement: mean(this.sums.errorAgreement, this.n),
    };
  }
}

const bump = (m: Record<string, number>, k: string) => {
  m[k] = (m[k] ?? 0) + 1;
};

/**
 * Reads traces (streaming) and summarises their fidelity: calls, parse errors by code, mean scores
 * overall and per tool, and every skipped line. Scores are recomputed from the recorded rehearsal
 * and actual responses, so traces from any studio version are scored alike. `calls` limits the
 * call-level figures to those call ids (the marked calls of `rehearse compare --only-marked`).
 */
export async function buildFidelityReport(
  files: readonly string[],
  options: { listCalls?: boolean; calls?: ReadonlySet<string> } = {},
): Promise<FidelityReport> {
  const report: FidelityReport = {
    traces: [],
    episodes: 0,
    successes: 0,
    graded: 0,
    meanReward: null,
    notEvaluated: [],
    rehearsals: null,
    notPlayed: [],
    turns: 0,
    actParseValid: 0,
    calls: 0,
    rehearsed: 0,
    rehearsalParseValid: 0,
    withActual: 0,
    parseErrors: { act: {}, rehearsal: {} },
    actualErrors: {},
    overall: new MeanAccumulator().means(),
    perTool: [],
  };
  const tally: ReportTally = {
    options,
    report,
    committed: new EpisodeAccumulator(),
    imagined: new EpisodeAccumulator(),
    overall: new MeanAccumulator(),
    tools: new Map(),
    rows: [],
    counted: (callId) => !options.calls || options.calls.has(callId),
  };
  for (const file of files) report.traces.push(await tallyTrace(tally, file));
  return finishReport(tally);
}

/** What every trace of a report adds to: the report's counts, the episode and score accumulators, the call rows. */
interface ReportTally {
  options: { listCalls?: boolean; calls?: ReadonlySet<string> };
  report: FidelityReport;
  committed: EpisodeAccumulator;
  imagined: EpisodeAccumulator;
  overall: MeanAccumulator;
  tools: Map<string, { acc: MeanAccumulator; calls: number; parseErrors: number }>;
  rows: CallRow[];
  /** Whether a call counts in the call-level figures. */
  counted: (callId: string) => boolean;
}

function toolStats(
  tally: ReportTally,
  name: string,
): { acc: MeanAccumulator; calls: number; parseErrors: number } {
  let t = tally.tools.get(name);
  if (!t) tally.tools.set(name, (t = { acc: new MeanAccumulator(), calls: 0, parseErrors: 0 }));
  return t;
}

/** One trace being read: its summary, and what it holds until an episode's first turn or a call's other half comes. */
interface TraceTally {
  file: string;
  summary: TraceSummary;
  imaginedEpisodes: Set<string>;
  /** Episodes started whose first turn has not come yet (only the open ones are held). */
  waitingForTurn: Set<string>;
  taskIds: Set<string>;
  /** Rehearsal and actual of a call meet here, then are scored and dropped. */
  halves: Map<string, { r?: CallRehearsalEvent; a?: CallActualEvent }>;
}

/** Reads one trace (streaming) into the tally and returns its summary. */
async function tallyTrace(tally: ReportTally, file: string): Promise<TraceSummary> {
  const summary: TraceSummary = {
    file,
    tasks: [],
    taskCount: 0,
    events: 0,
    skipped: [],
    skippedCount: 0,
  };
  const trace: TraceTally = {
    file,
    summary,
    imaginedEpisodes: new Set(),
    waitingForTurn: new Set(),
    taskIds: new Set(),
    halves: new Map(),
  };
  const result = await readTrace(file, { onEvent: (e) => tallyEvent(tally, trace, e) });
  // Calls still missing a half (imagine mode without audit, a run cut short) are listed too.
  if (tally.options.listCalls)
    for (const h of trace.halves.values())
      tally.rows.push(callRow(file, h.r, h.a, compareCall(h.r, h.a)));
  summary.events = result.events;
  summary.skipped = result.skipped;
  summary.skippedCount = result.skippedCount;
  return summary;
}

/** Adds one event of a trace to the tally. */
function tallyEvent(tally: ReportTally, trace: TraceTally, e: TraceEvent): void {
  const { report, counted } = tally;
  const { summary, imaginedEpisodes, waitingForTurn, taskIds, halves } = trace;
  switch (e.type) {
    case 'run':
      summary.runId ??= e.runId;
      summary.mode ??= e.mode;
      summary.policy ??= e.policy;
      break;
    case 'episode':
      waitingForTurn.add(e.episodeId);
      if (e.role === 'imagined') {
        imaginedEpisodes.add(e.episodeId);
        tally.imagined.started();
      } else tally.committed.started();
      if (!taskIds.has(e.taskId)) {
        taskIds.add(e.taskId);
        summary.taskCount++;
        if (summary.tasks.length < MAX_TASKS_LISTED)
          summary.tasks.push({
            taskId: e.taskId,
            ...(e.instruction !== undefined ? { instruction: e.instruction } : {}),
          });
      }
      break;
    case 'turn':
      waitingForTurn.delete(e.episodeId);
      report.turns++;
      if (e.parse.kind === 'error') bump(report.parseErrors.act, e.parse.code);
      else report.actParseValid++;
      if (e.parse.kind === 'calls')
        for (const c of e.parse.calls)
          if (counted(c.callId)) {
            report.calls++;
            toolStats(tally, c.name).calls++;
          }
      break;
    case 'call.rehearsal':
      if (!counted(e.callId)) break;
      report.rehearsed++;
      if (e.result.ok) report.rehearsalParseValid++;
      else {
        bump(report.parseErrors.rehearsal, e.result.code);
        toolStats(tally, e.tool).parseErrors++;
      }
      halves.set(e.callId, { ...halves.get(e.callId), r: e });
      settleCall(tally, trace, e.callId);
      break;
    case 'call.actual':
      if (!counted(e.callId)) break;
      report.withActual++;
      if (e.error) bump(report.actualErrors, e.error.code);
      halves.set(e.callId, { ...halves.get(e.callId), a: e });
      settleCall(tally, trace, e.callId);
      break;
    case 'episode.end':
      (imaginedEpisodes.has(e.episodeId) ? tally.imagined : tally.committed).ended(
        e.success,
        e.reward,
        e.checks,
      );
      if (waitingForTurn.delete(e.episodeId) && e.status === 'failed' && e.error) {
        const { code } = e.error;
        const seen = report.notPlayed.find((n) => n.code === code);
        if (seen) seen.count++;
        else report.notPlayed.push({ code: e.error.code, count: 1, message: e.error.message });
      }
      break;
    default:
      break;
  }
}

/** Scores a call once both its rehearsal and its actual response have come. */
function settleCall(tally: ReportTally, trace: TraceTally, callId: string): void {
  const h = trace.halves.get(callId)!;
  if (!h.r || !h.a) return;
  trace.halves.delete(callId);
  const cmp = compareCall(h.r, h.a);
  if (cmp.comparable !== 'none') {
    tally.overall.add(cmp.scores);
    toolStats(tally, h.r.tool).acc.add(cmp.scores);
  }
  if (tally.options.listCalls) tally.rows.push(callRow(trace.file, h.r, h.a, cmp));
}

/** Fills in the report's episode figures, means and per-tool rows from the tally. */
function finishReport(tally: ReportTally): FidelityReport {
  const { report } = tally;
  if (tally.options.listCalls)
    report.callList = tally.rows.sort(
      (a, b) =>
        (a.fieldF1 ?? -1) - (b.fieldF1 ?? -1) ||
        (a.file === b.file ? compareIds(a.callId, b.callId) : 0),
    );
  Object.assign(report, tally.committed.result());
  const rehearsals = tally.imagined.result();
  report.rehearsals = rehearsals.episodes > 0 ? rehearsals : null;
  report.overall = tally.overall.means();
  report.perTool = [...tally.tools.entries()]
    .map(([tool, t]) => ({
      tool,
      calls: t.calls,
      rehearsalParseErrors: t.parseErrors,
      ...t.acc.means(),
    }))
    .sort((a, b) => a.tool.localeCompare(b.tool));
  return report;
}

function callRow(
  file: string,
  r: CallRehearsalEvent | undefined,
  a: CallActualEvent | undefined,
  cmp: CallComparison,
): CallRow {
  let outcome: string;
  if (r && !r.result.ok) outcome = `parse error ${r.result.code}`;
  else if (a?.error) outcome = `tool error ${a.error.code}`;
  else if (cmp.comparable === 'none')
    outcome =
      cmp.reason === 'no-actual'
        ? 'not compared (no actual response)'
        : cmp.reason === 'no-rehearsal'
          ? 'not compared (not rehearsed)'
          : 'not compared';
  else
    outcome = cmp.scores.exactMatch
      ? 'exact'
      : cmp.scores.errorAgreement
        ? 'mismatch'
        : 'mismatch, error state differs';
  const event = (r ?? a)!;
  const missed =
    (r !== undefined && !r.result.ok) ||
    (!a?.error && cmp.comparable !== 'none' && !cmp.scores.exactMatch);
  return {
    file,
    callId: event.callId,
    tool: event.tool,
    outcome,
    fieldF1: cmp.comparable === 'none' ? null : cmp.scores.fieldF1,
    ...(missed ? { suggestedKind: suggestedCallKind({ rehearsal: r, comparison: cmp }) } : {}),
  };
}
