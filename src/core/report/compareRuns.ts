/**
 * Two runs of the same tasks side by side (two policies, or one policy before and after training):
 * per task, the success and fidelity of each, and the calls whose rehearsal scored differently (field
 * F1, key Jaccard, error state, parse), regressions first. What the Compare Runs panel
 * (webview/runs) shows, and its messages.
 */
import { z } from 'zod';
import {
  panelMessageParser,
  readyMessageSchema,
  requestMessageSchema,
} from '../base/panelMessages';
import type { CallEntry } from '../trace/index/entries';
import type { TraceIndex } from '../trace/index/traceIndex';
import { fidelityBadge } from '../fidelity/verdicts';
import type { RehearsalVerdict } from '../explorer/treeFilter';
import { rehearsalVerdict } from '../explorer/treeFilter';

/** One run's outcome on one task. */
export interface TaskSide {
  episodes: number;
  graded: number;
  successes: number;
  scored: number;
  meanFieldF1: number | null;
  /** Mean key Jaccard of its compared JSON calls. */
  meanKeyJaccard: number | null;
  /** Its rehearsals that did not parse. */
  parseErrors: number;
  /** The first episode of the task in this run (the Trajectory a task row opens). */
  episodeId: string;
}

/** A task both runs (or one of them) played; `regression`: B did worse on it than A. */
export interface TaskComparison {
  taskId: string;
  a?: TaskSide;
  b?: TaskSide;
  regression: boolean;
}

/** One call's scores in one run (null where it has none: a text response has no key Jaccard). */
export interface CallScores {
  fieldF1: number | null;
  keyJaccard: number | null;
  /** The rehearsal's error state agrees with the actual response's. */
  errorState: boolean | null;
  /** The rehearsal parsed. */
  parsed: boolean;
}

/** B − A of each score of a call; a boolean counts 1 when it holds. */
export interface ScoreChange {
  fieldF1: number | null;
  keyJaccard: number | null;
  errorState: number | null;
  parse: number;
}

/**
 * The same call in both runs, whose rehearsal scored differently: rehearsed right in one and wrong
 * in the other, or any score changed. `regression`: B is worse on some score.
 */
export interface CallPair {
  taskId: string;
  tool: string;
  a: { callId: string; badge: string; verdict: RehearsalVerdict; scores: CallScores };
  b: { callId: string; badge: string; verdict: RehearsalVerdict; scores: CallScores };
  change: ScoreChange;
  regression: boolean;
}

/** What the panel shows. */
export interface RunComparison {
  a: { file: string; runId: string; policy: string };
  b: { file: string; runId: string; policy: string };
  /** Regressions first (success lost, then the largest fall of mean field F1), then by task id. */
  tasks: TaskComparison[];
  /** Calls matched in both runs (same task, k-th episode of it, turn, position and tool). */
  matchedCalls: number;
  /** Of those, the ones whose scores changed: regressions first, the largest fall first. */
  pairs: CallPair[];
  /** Pairs left out past {@link MAX_PAIRS}. */
  morePairs: number;
}

/** Pairs the panel lists at most. */
export const MAX_PAIRS = 1000;

type TaskTally = Omit<TaskSide, 'meanFieldF1' | 'meanKeyJaccard'> & {
  f1: number;
  kj: number;
  kjScored: number;
};

/** A run's calls keyed by where they happen in a task (k-th episode of the task, turn, position, tool), and its tasks. */
function describe(index: TraceIndex): {
  calls: Map<string, CallEntry & { taskId: string }>;
  tasks: Map<string, TaskTally>;
} {
  const calls = new Map<string, CallEntry & { taskId: string }>();
  const tasks = new Map<string, TaskTally>();
  const seen = new Map<string, number>();
  for (const ep of index.episodes) {
    const k = seen.get(ep.taskId) ?? 0;
    seen.set(ep.taskId, k + 1);
    let t = tasks.get(ep.taskId);
    if (!t)
      tasks.set(
        ep.taskId,
        (t = {
          episodes: 0,
          graded: 0,
          successes: 0,
          scored: 0,
          parseErrors: 0,
          episodeId: ep.episodeId,
          f1: 0,
          kj: 0,
          kjScored: 0,
        }),
      );
    t.episodes++;
    if (ep.end?.success === true || ep.end?.success === false) {
      t.graded++;
      if (ep.end.success) t.successes++;
    }
    for (const turn of index.turnsOf(ep)) {
      for (const call of index.callsOf(turn)) {
        calls.set(
          `${ep.taskId}\u0000${k}\u0000${turn.index}\u0000${call.index}\u0000${call.tool}`,
          { ...call, taskId: ep.taskId },
        );
        if (call.rehearsalError) t.parseErrors++;
        if (call.scores) {
          t.scored++;
          t.f1 += call.scores.fieldF1;
          if (call.scores.keyJaccard !== null) {
            t.kjScored++;
            t.kj += call.scores.keyJaccard;
          }
        }
      }
    }
  }
  return { calls, tasks };
}

function side(t: TaskTally | undefined): TaskSide | undefined {
  if (!t) return undefined;
  const { f1, kj, kjScored, ...rest } = t;
  return {
    ...rest,
    meanFieldF1: t.scored ? f1 / t.scored : null,
    meanKeyJaccard: kjScored ? kj / kjScored : null,
  };
}

function callScores(call: CallEntry): CallScores {
  return {
    fieldF1: call.scores?.fieldF1 ?? (call.rehearsalError ? 0 : null),
    keyJaccard: call.scores?.keyJaccard ?? null,
    errorState: call.scores ? call.scores.errorAgreement : null,
    parsed: !call.rehearsalError,
  };
}

const minus = (b: number | null, a: number | null) => (a === null || b === null ? null : b - a);
const asNumber = (x: boolean | null) => (x === null ? null : Number(x));
const EPSILON = 1e-9;

function scoreChange(a: CallScores, b: CallScores): ScoreChange {
  return {
    fieldF1: minus(b.fieldF1, a.fieldF1),
    keyJaccard: minus(b.keyJaccard, a.keyJaccard),
    errorState: minus(asNumber(b.errorState), asNumber(a.errorState)),
    parse: Number(b.parsed) - Number(a.parsed),
  };
}

/** The largest fall (negative) or, with none, the largest gain of any score. */
function worstChange(c: ScoreChange): number {
  const values = [c.fieldF1, c.keyJaccard, c.errorState, c.parse].filter(
    (v): v is number => v !== null,
  );
  const lowest = Math.min(0, ...values);
  return lowest < -EPSILON ? lowest : Math.max(0, ...values);
}

/**
 * How much worse B did on a task (negative; 0 when not worse): success decides when it changed (a
 * task lost comes first, a task won is no regression), else the largest fall of its mean field F1
 * or key Jaccard, or more rehearsals that did not parse.
 */
function taskRegression(t: TaskComparison): number {
  if (!t.a || !t.b) return 0;
  const rate = (s: TaskSide) => (s.graded ? s.successes / s.graded : 0);
  const success = rate(t.b) - rate(t.a);
  if (success < -EPSILON) return success * 10;
  if (success > EPSILON) return 0;
  const f1 = minus(t.b.meanFieldF1, t.a.meanFieldF1) ?? 0;
  const kj = minus(t.b.meanKeyJaccard, t.a.meanKeyJaccard) ?? 0;
  return Math.min(0, f1, kj) - (t.b.parseErrors > t.a.parseErrors ? 1 : 0);
}

/** Compares two runs of the same tasks. */
export function compareRuns(
  a: TraceIndex,
  b: TraceIndex,
  label: (index: TraceIndex) => string,
): RunComparison {
  const da = describe(a);
  const db = describe(b);
  const taskIds = [...new Set([...da.tasks.keys(), ...db.tasks.keys()])].sort();
  const pairs: (CallPair & { worst: number })[] = [];
  let matched = 0;
  for (const [key, ca] of da.calls) {
    const cb = db.calls.get(key);
    if (!cb) continue;
    matched++;
    const va = rehearsalVerdict(ca);
    const vb = rehearsalVerdict(cb);
    if (va === 'none' || vb === 'none') continue;
    const sa = callScores(ca);
    const sb = callScores(cb);
    const change = scoreChange(sa, sb);
    const worst = worstChange(change);
    if (va === vb && Math.abs(worst) <= EPSILON) continue;
    const regression = worst < -EPSILON || (va === 'right' && vb === 'wrong');
    pairs.push({
      taskId: ca.taskId,
      tool: ca.tool,
      a: { callId: ca.callId, badge: fidelityBadge(ca).text, verdict: va, scores: sa },
      b: { callId: cb.callId, badge: fidelityBadge(cb).text, verdict: vb, scores: sb },
      change,
      regression,
      worst,
    });
  }
  pairs.sort(
    (x, y) =>
      Number(y.regression) - Number(x.regression) ||
      (x.regression ? x.worst - y.worst : y.worst - x.worst) ||
      x.taskId.localeCompare(y.taskId) ||
      x.a.callId.localeCompare(y.a.callId),
  );
  const run = (index: TraceIndex) => ({
    file: index.file,
    runId: index.run?.runId ?? '',
    policy: label(index),
  });
  const tasks = taskIds
    .map((taskId) => {
      const t: TaskComparison = {
        taskId,
        ...(da.tasks.has(taskId) ? { a: side(da.tasks.get(taskId)) } : {}),
        ...(db.tasks.has(taskId) ? { b: side(db.tasks.get(taskId)) } : {}),
        regression: false,
      };
      const score = taskRegression(t);
      return { t: { ...t, regression: score < -EPSILON }, score };
    })
    .sort((x, y) => x.score - y.score || x.t.taskId.localeCompare(y.t.taskId))
    .map(({ t }) => t);
  return {
    a: run(a),
    b: run(b),
    tasks,
    matchedCalls: matched,
    pairs: pairs.slice(0, MAX_PAIRS).map(({ worst: _w, ...p }) => p),
    morePairs: Math.max(0, pairs.length - MAX_PAIRS),
  };
}

const runsMessageSchema = z.discriminatedUnion('type', [
  readyMessageSchema,
  z.object({
    type: z.literal('rendered'),
    tasks: z.number().int().nonnegative(),
    pairs: z.number().int().nonnegative(),
  }),
  requestMessageSchema(
    z.discriminatedUnion('method', [
      z.object({ method: z.literal('openPair'), a: z.string().max(200), b: z.string().max(200) }),
      z.object({ method: z.literal('openTask'), taskId: z.string().max(500) }),
    ]),
  ),
]);

/** What the Compare Runs panel sends to its host. */
export type RunsMessage = z.infer<typeof runsMessageSchema>;

/** A request of the panel. */
export type RunsRequest = Extract<RunsMessage, { type: 'request' }>['request'];

/** What the host sends to the panel. */
export type RunsHostMessage = { type: 'snapshot'; snapshot: RunComparison };

/** A panel message, if `value` is one. */
export const parseRunsMessage: (value: unknown) => RunsMessage | undefined =
  panelMessageParser(runsMessageSchema);
