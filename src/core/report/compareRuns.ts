/**
 * Two runs of the same tasks side by side (two policies, or one policy before and after training):
 * per task, the success and fidelity of each, and the calls where one rehearsed right and the other
 * wrong. What the Compare Runs panel (webview/runs) shows, and its messages.
 */
import { z } from 'zod';
import {
  panelMessageParser,
  readyMessageSchema,
  requestMessageSchema,
} from '../base/panelMessages';
import type { CallEntry } from '../trace/index/entries';
import type { TraceIndex } from '../trace/index/traceIndex';
import { fidelityBadge } from '../explorer/tree';
import type { RehearsalVerdict } from '../explorer/treeFilter';
import { rehearsalVerdict } from '../explorer/treeFilter';

/** One run's outcome on one task. */
export interface TaskSide {
  episodes: number;
  graded: number;
  successes: number;
  scored: number;
  meanFieldF1: number | null;
}

/** A task both runs (or one of them) played. */
export interface TaskComparison {
  taskId: string;
  a?: TaskSide;
  b?: TaskSide;
}

/** The same call in both runs, rehearsed right in one and wrong in the other. */
export interface CallPair {
  taskId: string;
  tool: string;
  a: { callId: string; badge: string; verdict: RehearsalVerdict };
  b: { callId: string; badge: string; verdict: RehearsalVerdict };
}

/** What the panel shows. */
export interface RunComparison {
  a: { file: string; runId: string; policy: string };
  b: { file: string; runId: string; policy: string };
  tasks: TaskComparison[];
  /** Calls matched in both runs (same task, k-th episode of it, turn, position and tool). */
  matchedCalls: number;
  /** Of those, where one side was right and the other wrong: A right first. */
  pairs: CallPair[];
  /** Pairs left out past {@link MAX_PAIRS}. */
  morePairs: number;
}

/** Pairs the panel lists at most. */
export const MAX_PAIRS = 1000;

/** A run's calls keyed by where they happen in a task (k-th episode of the task, turn, position, tool), and its tasks. */
function describe(index: TraceIndex): {
  calls: Map<string, CallEntry & { taskId: string }>;
  tasks: Map<string, TaskSide & { f1: number }>;
} {
  const calls = new Map<string, CallEntry & { taskId: string }>();
  const tasks = new Map<string, TaskSide & { f1: number }>();
  const seen = new Map<string, number>();
  for (const ep of index.episodes) {
    const k = seen.get(ep.taskId) ?? 0;
    seen.set(ep.taskId, k + 1);
    let t = tasks.get(ep.taskId);
    if (!t)
      tasks.set(
        ep.taskId,
        (t = { episodes: 0, graded: 0, successes: 0, scored: 0, meanFieldF1: null, f1: 0 }),
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
        if (call.scores) {
          t.scored++;
          t.f1 += call.scores.fieldF1;
        }
      }
    }
  }
  return { calls, tasks };
}

function side(t: (TaskSide & { f1: number }) | undefined): TaskSide | undefined {
  if (!t) return undefined;
  const { f1, ...rest } = t;
  return { ...rest, meanFieldF1: t.scored ? f1 / t.scored : null };
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
  const pairs: CallPair[] = [];
  let matched = 0;
  for (const [key, ca] of da.calls) {
    const cb = db.calls.get(key);
    if (!cb) continue;
    matched++;
    const va = rehearsalVerdict(ca);
    const vb = rehearsalVerdict(cb);
    if (va === vb || va === 'none' || vb === 'none') continue;
    pairs.push({
      taskId: ca.taskId,
      tool: ca.tool,
      a: { callId: ca.callId, badge: fidelityBadge(ca).text, verdict: va },
      b: { callId: cb.callId, badge: fidelityBadge(cb).text, verdict: vb },
    });
  }
  pairs.sort(
    (x, y) =>
      Number(y.a.verdict === 'right') - Number(x.a.verdict === 'right') ||
      x.taskId.localeCompare(y.taskId),
  );
  const run = (index: TraceIndex) => ({
    file: index.file,
    runId: index.run?.runId ?? '',
    policy: label(index),
  });
  return {
    a: run(a),
    b: run(b),
    tasks: taskIds.map((taskId) => ({
      taskId,
      ...(da.tasks.has(taskId) ? { a: side(da.tasks.get(taskId)) } : {}),
      ...(db.tasks.has(taskId) ? { b: side(db.tasks.get(taskId)) } : {}),
    })),
    matchedCalls: matched,
    pairs: pairs.slice(0, MAX_PAIRS),
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
    z.object({ method: z.literal('openPair'), a: z.string().max(200), b: z.string().max(200) }),
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
