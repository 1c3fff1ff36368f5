/**
 * The run summary panel (webview/summary): a run's metrics and a table of its episodes, and the
 * messages between the panel and its host. The host computes every value from the trace index
 * (no event is read: a run of 100,000 episodes summarises in a fraction of a second); the panel
 * sorts, filters and draws only the rows in view.
 */
import { z } from 'zod';
import {
  panelMessageParser,
  readyMessageSchema,
  requestMessageSchema,
} from '../base/panelMessages';
import type { NodeStatus } from '../fidelity/verdicts';
import { episodeOutcome } from '../fidelity/verdicts';
import { policyLabel } from '../trace/format/policyLabel';
import type { TraceIndex } from '../trace/index/traceIndex';
import type { BfclAccuracyReport } from './bfclAccuracy';

/** One tool's calls in a run. */
export interface ToolFidelity {
  tool: string;
  calls: number;
  /** Calls whose rehearsal was scored against the actual response. */
  scored: number;
  exact: number;
  meanFieldF1: number | null;
  rehearsalParseErrors: number;
}

/** The episodes of a run, as columns (one entry per episode, in trace order). */
export interface EpisodeColumns {
  episodeIds: string[];
  taskIds: string[];
  /** The outcome in the tree's words (`success · reward 1.00`, `failed (TOOL_TIMEOUT)`). */
  outcomes: string[];
  statuses: NodeStatus[];
  rewards: (number | null)[];
  turns: number[];
  calls: number[];
  meanFieldF1: (number | null)[];
  /** The least faithful call that was scored, or whose rehearsal did not parse. */
  worstCallIds: (string | null)[];
  worstFieldF1: (number | null)[];
  /** Act and rehearsal parse errors. */
  parseErrors: number[];
  durationMs: (number | null)[];
}

/** What the run summary panel shows. */
export interface RunSummarySnapshot {
  file: string;
  runId: string;
  mode: string;
  policy: string;
  device: string | null;
  status: 'running' | 'completed' | 'failed' | 'cancelled';
  metrics: {
    episodes: number;
    graded: number;
    successes: number;
    meanReward: number | null;
    turns: number;
    actParseValid: number;
    calls: number;
    rehearsed: number;
    rehearsalParseValid: number;
    scored: number;
    exact: number;
    meanFieldF1: number | null;
    /** The policy's act tokens per second (completion tokens over generation time of the turns that recorded both). */
    actTokensPerSecond: number | null;
  };
  perTool: ToolFidelity[];
  episodes: EpisodeColumns;
  /** BFCL-v4 accuracy per multi-turn category, for a run of BFCL tasks (`rehearse report --format bfcl`). */
  bfcl?: BfclAccuracyReport;
}

const mean = (sum: number, n: number) => (n > 0 ? sum / n : null);

/** The summary of a run from its trace index. */
export function runSummary(index: TraceIndex): RunSummarySnapshot {
  const run = index.run;
  const calls = tallyCalls(index);
  const { cols, graded, successes, rewardSum, rewarded, turns, actValid } = episodeColumns(
    index,
    calls.byEpisode,
  );
  const { rehearsed, rehearsalValid, scored, exact, f1Sum } = calls;
  return {
    file: index.file,
    runId: run?.runId ?? '',
    mode: run?.mode ?? '',
    policy: run ? policyLabel(run.policy, index.file) : '',
    device: run?.policy.device ?? null,
    status: index.runEnd?.status ?? 'running',
    metrics: {
      episodes: cols.episodeIds.length,
      graded,
      successes,
      meanReward: mean(rewardSum, rewarded),
      turns,
      actParseValid: actValid,
      calls: index.callCount,
      rehearsed,
      rehearsalParseValid: rehearsalValid,
      scored,
      exact,
      meanFieldF1: mean(f1Sum, scored),
      actTokensPerSecond: (() => {
        const t = index.actThroughput();
        return t.ms > 0 ? (1000 * t.tokens) / t.ms : null;
      })(),
    },
    perTool: [...calls.tools.values()]
      .sort((a, b) => a.tool.localeCompare(b.tool))
      .map(({ f1, ...t }) => ({ ...t, meanFieldF1: mean(f1, t.scored) })),
    episodes: cols,
  };
}

/** One episode's calls, summed: how many, their scores, the worst one, and rehearsals that did not parse. */
interface EpisodeCalls {
  calls: number;
  scored: number;
  f1: number;
  worst: string | null;
  worstF1: number;
  parseErrors: number;
}

/** The run's calls, summed by episode, by tool and overall. */
interface CallTally {
  byEpisode: Map<string, EpisodeCalls>;
  tools: Map<string, ToolFidelity & { f1: number }>;
  rehearsed: number;
  rehearsalValid: number;
  scored: number;
  exact: number;
  f1Sum: number;
}

/** Sums the run's calls by episode and by tool. */
function tallyCalls(index: TraceIndex): CallTally {
  const byEpisode = new Map<string, EpisodeCalls>();
  const tools = new Map<string, ToolFidelity & { f1: number }>();
  let rehearsed = 0,
    rehearsalValid = 0,
    scored = 0,
    exact = 0,
    f1Sum = 0;
  // With locations: whether a call was rehearsed is whether it has a rehearsal event.
  for (const c of index.calls()) {
    let e = byEpisode.get(c.episodeId);
    if (!e)
      byEpisode.set(
        c.episodeId,
        (e = { calls: 0, scored: 0, f1: 0, worst: null, worstF1: Infinity, parseErrors: 0 }),
      );
    let t = tools.get(c.tool);
    if (!t)
      tools.set(
        c.tool,
        (t = {
          tool: c.tool,
          calls: 0,
          scored: 0,
          exact: 0,
          meanFieldF1: null,
          rehearsalParseErrors: 0,
          f1: 0,
        }),
      );
    e.calls++;
    t.calls++;
    if (c.rehearsal || c.rehearsalError) rehearsed++;
    if (c.rehearsalError) {
      e.parseErrors++;
      t.rehearsalParseErrors++;
      // A rehearsal that did not parse is the worst a call can be.
      if (e.worstF1 > -1) {
        e.worst = c.callId;
        e.worstF1 = -1;
      }
      continue;
    }
    if (c.rehearsal) rehearsalValid++;
    if (!c.scores) continue;
    const f1 = c.scores.fieldF1;
    scored++;
    e.scored++;
    t.scored++;
    f1Sum += f1;
    e.f1 += f1;
    t.f1 += f1;
    if (c.scores.exactMatch) {
      exact++;
      t.exact++;
    }
    if (f1 < e.worstF1) {
      e.worst = c.callId;
      e.worstF1 = f1;
    }
  }
  return { byEpisode, tools, rehearsed, rehearsalValid, scored, exact, f1Sum };
}

/** The episodes' table (one column per figure), with the run's episode and turn counts. */
function episodeColumns(index: TraceIndex, byEpisode: Map<string, EpisodeCalls>) {
  const cols: EpisodeColumns = {
    episodeIds: [],
    taskIds: [],
    outcomes: [],
    statuses: [],
    rewards: [],
    turns: [],
    calls: [],
    meanFieldF1: [],
    worstCallIds: [],
    worstFieldF1: [],
    parseErrors: [],
    durationMs: [],
  };
  let graded = 0,
    successes = 0,
    rewardSum = 0,
    rewarded = 0,
    turns = 0,
    actValid = 0;
  for (const ep of index.episodes) {
    const outcome = episodeOutcome(ep);
    const e = byEpisode.get(ep.episodeId);
    let actErrors = 0;
    for (const t of index.turnsOf(ep)) {
      turns++;
      if (t.kind === 'error') actErrors++;
      else actValid++;
    }
    cols.episodeIds.push(ep.episodeId);
    cols.taskIds.push(ep.taskId);
    cols.outcomes.push(outcome.description);
    cols.statuses.push(outcome.status);
    cols.rewards.push(ep.end?.reward ?? null);
    cols.turns.push(ep.turnIds.length);
    cols.calls.push(e?.calls ?? 0);
    cols.meanFieldF1.push(e ? mean(e.f1, e.scored) : null);
    cols.worstCallIds.push(e?.worst ?? null);
    cols.worstFieldF1.push(e?.worst ? Math.max(e.worstF1, -1) : null);
    cols.parseErrors.push(actErrors + (e?.parseErrors ?? 0));
    cols.durationMs.push(ep.durationMs ?? null);
    if (ep.end?.success === true || ep.end?.success === false) {
      graded++;
      if (ep.end.success) successes++;
    }
    if (ep.end && ep.end.reward !== null) {
      rewarded++;
      rewardSum += ep.end.reward;
    }
  }
  return { cols, graded, successes, rewardSum, rewarded, turns, actValid };
}

const summaryMessageSchema = z.discriminatedUnion('type', [
  readyMessageSchema,
  z.object({
    type: z.literal('rendered'),
    rows: z.number().int().nonnegative(),
    shown: z.number().int().nonnegative(),
    total: z.number().int().nonnegative(),
  }),
  requestMessageSchema(
    z.object({
      method: z.literal('openEpisode'),
      episodeId: z.string().max(200),
      callId: z.string().max(200).optional(),
    }),
  ),
]);

/** What the run summary panel sends to its host. */
export type SummaryMessage = z.infer<typeof summaryMessageSchema>;

/** A request of the panel. */
export type SummaryRequest = Extract<SummaryMessage, { type: 'request' }>['request'];

/** What the host sends to the panel. */
export type SummaryHostMessage = { type: 'snapshot'; snapshot: RunSummarySnapshot };

/** A panel message, if `value` is one. */
export const parseSummaryMessage: (value: unknown) => SummaryMessage | undefined =
  panelMessageParser(summaryMessageSchema);
