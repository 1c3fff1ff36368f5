import { canonicalJson } from '../base/canonicalJson';
import type { JsonValue } from '../base/json';
import type { AnnotationLookup } from '../explorer/treeFilter';
import type { Annotation, AnnotationKind, AnnotationSeverity } from '../annotations/schema';
import {
  ANNOTATION_KINDS,
  ANNOTATION_KIND_DESCRIPTIONS,
  ANNOTATION_KIND_LABELS,
  ANNOTATION_SEVERITIES,
} from '../annotations/schema';
import { suggestedCallKind, suggestedKind } from '../annotations/suggest';
import type { FidelityScores } from '../fidelity/scores';
import type { DiffKind } from '../fidelity/structuralDiff';
import { callArguments, loadCallView } from '../trace/index/callView';
import type { CallView } from '../trace/index/callView';
import { callDiffMarks } from '../explorer/diffMarks';
import type {
  CheckVerdict,
  EpisodeEndEvent,
  EpisodeEvent,
  TokenCounts,
  TurnEvent,
  UserCallRecord,
} from '../trace/format/schema';
import { actualToolText } from '../runner/toolMessages';
import type { TraceIndex } from '../trace/index/traceIndex';
import type { RehearsalMemory } from '../explorer/rehearsalMemory';
import { loadRehearsalMemory } from '../explorer/rehearsalMemory';
import type { NodeStatus } from '../fidelity/verdicts';
import { fidelityBadge } from '../fidelity/verdicts';
import { StudioError } from '../base/errors';

/** One side of a call as the Trajectory panel shows it. */
export interface TrajectorySide {
  language: 'json' | 'plaintext';
  text: string;
  /**
   * Lines (0-based) to highlight, with the kind of difference on them; `first` on the line where a
   * differing path starts (its key), the rest of its value only outlined (a 40-line subtree all in
   * red was unreadable).
   */
  lines: { line: number; kind: DiffKind; first: boolean }[];
  /** For text comparisons: the text in runs, `changed` where it differs from the other side. */
  words?: { value: string; changed: boolean }[];
}

/** One difference of a call's structural diff, with the values on each side as short text. */
export interface TrajectoryDiffEntry {
  path: string;
  kind: DiffKind;
  suggestedKind: AnnotationKind;
  rehearsal?: string;
  actual?: string;
}

/** One call of a turn. */
export interface TrajectoryCall {
  callId: string;
  tool: string;
  /** The arguments as pretty JSON. */
  arguments: string;
  badge: { text: string; status: NodeStatus };
  scores?: FidelityScores;
  rehearsal: TrajectorySide;
  actual: TrajectorySide;
  diff: TrajectoryDiffEntry[];
  /** Why rehearsal and actual were not compared, when they were not. */
  notCompared?: string;
  /** The kind of error to preselect when marking the whole call. */
  suggestedKind: AnnotationKind;
  annotations: Annotation[];
  /** How long the rehearse role and the real tool took, when recorded. */
  latency: { rehearsalMs?: number; actualMs?: number };
}

/** One call the task's user made with a tool of its own (τ²'s telecom user on its phone). */
export interface TrajectoryUserCall {
  tool: string;
  /** The arguments as compact JSON. */
  arguments: string;
  /** What the tool answered, or why it did not. */
  result: string;
  error: boolean;
}

/** One act of the policy, with the user message before it and its calls. */
export interface TrajectoryTurn {
  turnId: string;
  index: number;
  user?: string;
  /** The user's own calls before its message. */
  userCalls?: TrajectoryUserCall[];
  text: string;
  parse:
    | { kind: 'calls' }
    | { kind: 'final'; answer: string }
    | { kind: 'error'; code: string; message: string };
  tokens?: TokenCounts;
  latencyMs?: number;
  calls: TrajectoryCall[];
}

/** Everything the Trajectory panel shows of one episode: the whole state, pushed at once. */
export interface TrajectorySnapshot {
  file: string;
  runId: string;
  mode: string;
  policy: string;
  episode: {
    episodeId: string;
    taskId: string;
    role?: string;
    instruction?: string;
    /** `running`, or how it ended. */
    status: string;
    description: string;
    nodeStatus: NodeStatus;
    reward: number | null;
    success: boolean | null;
    checks: CheckVerdict[];
    answer?: string;
    error?: { code: string; message: string };
  };
  /**
   * A committed episode of private rehearsal: the memory it read and the imagined attempts it was
   * made from (an `outcomes` memory line by line, each line with its attempts and calls).
   */
  memory?: RehearsalMemory;
  turns: TrajectoryTurn[];
  /** The user's own calls after the last turn (before the message that ended the conversation). */
  userCallsAfter?: TrajectoryUserCall[];
  /** The annotation kinds and severities offered by the controls. */
  kinds: { code: AnnotationKind; label: string; description: string }[];
  severities: AnnotationSeverity[];
  /** Set when annotations cannot be changed here, with why (an untrusted workspace). */
  readOnly?: string;
  /** The call to scroll to. */
  focusCallId?: string;
}

const VALUE_PREVIEW_CHARS = 160;

function preview(value: JsonValue | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = canonicalJson(value);
  return text.length > VALUE_PREVIEW_CHARS ? text.slice(0, VALUE_PREVIEW_CHARS - 1) + '…' : text;
}

const NOT_COMPARED: Record<string, string> = {
  'rehearsal-parse-error': 'the rehearsal did not parse',
  'no-rehearsal': 'this call was not rehearsed',
  'no-actual': 'the tool has not answered (yet)',
  'actual-error': 'the tool gave no response',
};

/** The panel's view of one call, from its call view and annotations. */
export function trajectoryCall(view: CallView, annotations: Annotation[]): TrajectoryCall {
  const { documents, marks } = callDiffMarks(view);
  const side = (which: 'rehearsal' | 'actual'): TrajectorySide => ({
    language: documents[which].language,
    text: documents[which].text,
    lines: marks
      .filter((m) => m.side === which)
      .flatMap((m) =>
        range(m.range.startLine, m.range.endLine).map((line) => ({
          line,
          kind: m.kind,
          first: line === m.range.startLine,
        })),
      ),
  });
  const rehearsal = side('rehearsal');
  const actual = side('actual');
  const cmp = view.comparison;
  if (cmp.comparable === 'text') {
    rehearsal.words = cmp.textDiff
      .filter((c) => !c.added)
      .map((c) => ({ value: c.value, changed: c.removed }));
    actual.words = cmp.textDiff
      .filter((c) => !c.removed)
      .map((c) => ({ value: c.value, changed: c.added }));
  }
  const call: TrajectoryCall = {
    callId: view.entry.callId,
    tool: view.entry.tool,
    arguments: canonicalJson(callArguments(view) ?? null, { indent: 2 }),
    badge: fidelityBadge(view.entry),
    rehearsal,
    actual,
    diff:
      cmp.comparable === 'json'
        ? cmp.diff.map((d) => ({
            path: d.path,
            kind: d.kind,
            suggestedKind: suggestedKind(d.kind),
            rehearsal: preview(d.rehearsal),
            actual: preview(d.actual),
          }))
        : [],
    suggestedKind: suggestedCallKind(view),
    annotations,
    latency: {
      ...(view.rehearsal?.latencyMs !== undefined ? { rehearsalMs: view.rehearsal.latencyMs } : {}),
      ...(view.actual?.latencyMs !== undefined ? { actualMs: view.actual.latencyMs } : {}),
    },
  };
  if (cmp.comparable !== 'none') call.scores = cmp.scores;
  else call.notCompared = NOT_COMPARED[cmp.reason] ?? cmp.reason;
  return call;
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i <= to; i++) out.push(i);
  return out;
}

/**
 * Reads one episode of a trace through its index: the episode, each turn with the user message
 * before it, each call with both sides, their diff and scores, and the annotations of each call;
 * for a committed episode of private rehearsal, the memory it read and its imagined attempts.
 */
export async function loadTrajectory(
  index: TraceIndex,
  episodeId: string,
  annotations?: AnnotationLookup,
): Promise<TrajectorySnapshot> {
  const ep = index.episode(episodeId);
  if (!ep)
    throw new StudioError(
      'UNKNOWN_EPISODE',
      `No episode ${JSON.stringify(episodeId)} in ${index.file}.`,
    );
  const [episode, end] = await Promise.all([
    index.readEvent(ep.location) as Promise<EpisodeEvent>,
    ep.end
      ? (index.readEvent(ep.end.location) as Promise<EpisodeEndEvent>)
      : Promise.resolve(undefined),
  ]);
  const turns: TrajectoryTurn[] = [];
  for (const t of index.turnsOf(ep)) {
    const event = (await index.readEvent(t.location)) as TurnEvent;
    const calls: TrajectoryCall[] = [];
    for (const c of index.callsOf(t))
      calls.push(
        trajectoryCall(await loadCallView(index, c.callId), annotations?.forCall(c.callId) ?? []),
      );
    const parse: TrajectoryTurn['parse'] =
      event.parse.kind === 'calls'
        ? { kind: 'calls' }
        : event.parse.kind === 'final'
          ? { kind: 'final', answer: event.parse.answer }
          : { kind: 'error', code: event.parse.code, message: event.parse.message };
    turns.push({
      turnId: t.turnId,
      index: t.index,
      ...(event.user !== undefined ? { user: event.user } : {}),
      ...(event.userCalls?.length ? { userCalls: event.userCalls.map(trajectoryUserCall) } : {}),
      text: event.text,
      parse,
      ...(event.tokens ? { tokens: event.tokens } : {}),
      ...(event.latencyMs !== undefined ? { latencyMs: event.latencyMs } : {}),
      calls,
    });
  }
  const described = describeEnd(end);
  const memory = ep.role === 'committed' ? await loadRehearsalMemory(index, episodeId) : undefined;
  return {
    file: index.file,
    runId: index.run?.runId ?? '',
    mode: index.run?.mode ?? ep.mode,
    policy: index.run?.policy.id ?? '',
    episode: {
      episodeId: ep.episodeId,
      taskId: ep.taskId,
      ...(ep.role ? { role: ep.role } : {}),
      ...(episode.instruction !== undefined ? { instruction: episode.instruction } : {}),
      ...described,
      checks: end?.checks ?? [],
      ...(end?.answer !== undefined ? { answer: end.answer } : {}),
      ...(end?.error ? { error: end.error } : {}),
    },
    ...(memory ? { memory } : {}),
    turns,
    ...(end?.userCalls?.length ? { userCallsAfter: end.userCalls.map(trajectoryUserCall) } : {}),
    kinds: ANNOTATION_KINDS.map((code) => ({
      code,
      label: ANNOTATION_KIND_LABELS[code],
      description: ANNOTATION_KIND_DESCRIPTIONS[code],
    })),
    severities: [...ANNOTATION_SEVERITIES],
  };
}

/** A user's call as the panel shows it. */
function trajectoryUserCall(c: UserCallRecord): TrajectoryUserCall {
  return {
    tool: c.name,
    arguments: canonicalJson(c.arguments),
    result: actualToolText(c.response, c.error),
    error: !!c.error || c.response?.isError === true,
  };
}

function describeEnd(
  end: EpisodeEndEvent | undefined,
): Pick<
  TrajectorySnapshot['episode'],
  'status' | 'description' | 'nodeStatus' | 'reward' | 'success'
> {
  if (!end)
    return {
      status: 'running',
      description: 'running',
      nodeStatus: 'running',
      reward: null,
      success: null,
    };
  const reward = end.reward === null ? '' : ` · reward ${end.reward.toFixed(2)}`;
  if (end.status === 'failed' || end.status === 'cancelled') {
    return {
      status: end.status,
      description: `${end.status}${end.error ? ` (${end.error.code})` : ''}${reward}`,
      nodeStatus: 'error',
      reward: end.reward,
      success: end.success,
    };
  }
  const outcome = end.success === null ? 'ungraded' : end.success ? 'success' : 'failure';
  return {
    status: end.status,
    description: `${outcome}${reward}${end.status === 'limit' ? ' · hit a limit' : ''}`,
    nodeStatus: end.success ? 'ok' : end.success === null ? 'info' : 'mismatch',
    reward: end.reward,
    success: end.success,
  };
}
