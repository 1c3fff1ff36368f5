import { PlannedOrder } from '../trace/format/plannedOrder';
import { canonicalJson } from '../base/canonicalJson';
import type { JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import { actualValue } from '../fidelity/responseValue';
import { formatRehearsal } from '../protocol/rehearsalParser';
import type { RehearsePromptOptions } from '../protocol/rehearsePrompt';
import { buildRehearsePrompt } from '../protocol/rehearsePrompt';
import type { ChatMessage, RecordedExample, ToolDefinition } from '../protocol/types';
import { toFunctionSchema } from '../protocol/types';
import { IdentifierSlots } from '../protocol/identifierSlots';
import { readTrace } from '../trace/format/reader';
import { isRehearsalParseCode } from '../protocol/codes';
import type {
  CallActualEvent,
  CallRehearsalEvent,
  SampledText,
  EpisodeEndEvent,
  EpisodeEvent,
  RunEvent,
  TraceEvent,
  TurnEvent,
} from '../trace/format/schema';
import {
  actualEventToolText,
  actualToolText,
  parseErrorToolMessage,
  rehearsedToolResult,
  simulatorErrorText,
} from '../runner/toolMessages';
import { isParseDialect } from '../protocol/dialect';
import { compareCall } from '../trace/index/callView';
import type { AnnotationSet } from '../annotations/annotationSet';
import { annotationsFileFor, readAnnotations } from '../annotations/store';
import { episodeMessages } from '../runner/episode';
import { envaceRecordToolText } from '../runner/toolMessages';
import { parsePythonJson } from '../protocol/pythonJsonLoads';
import type { RecordedCall } from '../env/replayRecording';
import { examplePairs } from '../tasks/import/conversation';
import { groundingWeight, rowAnnotations } from './annotationWeights';
import type { DatasetRow, RowSource } from './datasetRow';
import { envaceRowReward } from '../tasks/checks/envaceReward';

/** What to export from traces. */
export interface ExportOptions {
  /** Act rows: `demonstration` (reference runs, people) or `rollout` (the policy's own episodes). */
  actSource: Extract<RowSource, 'demonstration' | 'rollout'>;
  /** Only episodes whose grade says success. */
  onlySuccessful?: boolean;
  /** Roles to write. */
  roles?: ('act' | 'rehearse')[];
  /** Rehearse rows with the real tool's response as target (grounding, and demonstrations of the rehearse role). */
  actualRehearsals?: boolean;
  /** Rehearse rows with the policy's own rehearsal as target (rollouts). */
  policyRehearsals?: boolean;
  /** The rehearse prompt's sections; default: those the run recorded in its settings. */
  rehearsePrompt?: RehearsePromptOptions;
  /** The task's few-shot examples and system prompt, when not recorded in the trace. */
  taskInfo?: (taskId: string) => { examples?: RecordedExample[]; system?: string } | undefined;
  /** GRPO group of an episode's rows (rollouts); default: the task id. */
  group?: (taskId: string) => string;
  /**
   * Read each trace's `annotations.jsonl` (default true): rehearse rows carry their call's
   * annotations, and a grounding row of a call marked as a fidelity error is weighted up by severity.
   */
  annotations?: boolean;
  /** Row weight of a call's rehearse rows; default: from the annotations (1 without any). */
  callWeight?: (callId: string) => number;
  /**
   * `turn`: one act row per turn. `episode`: one act row per episode (its last turn) that also trains
   * every earlier turn (`train_history`): the same supervision, a fraction of the tokens.
   */
  actRows?: 'turn' | 'episode';
  /** Only runs with these ids (a run's id, which is also its folder's name). */
  runs?: ReadonlySet<string>;
  /** Rehearse rows only of calls to these tools (act rows are not filtered). */
  tools?: ReadonlySet<string>;
  /**
   * Rehearse rows only of calls whose rehearsal did not match the actual response: not exact, or a
   * rehearsal parse error (act rows are not filtered).
   */
  onlyMismatches?: boolean;
  /**
   * Rows for a model that reads identifiers as slots (`IdentifierSlots`): each row's messages and
   * target hidden together, as the policy hides its prompt and reveals its output.
   */
  identifierSlots?: boolean;
  /**
   * Demonstrations acted on a rehearsal memory: the memories a task's episodes are also written
   * with (`rehearse export --memory-from`). Each demonstration's act rows are written again once per
   * memory, read with it as a system message after the task's (as the committed episode of private
   * rehearsal reads it), so that a policy learns to act on its memory rather than meet it at test
   * time as text it never saw.
   */
  memories?: (taskId: string) => readonly string[];
}

/** Counts of what an export wrote and skipped. */
export interface ExportSummary {
  episodes: number;
  /**
   * Act rows left out of rollouts because a rehearsal that did not parse ended the episode: its
   * reward says the world model broke, not how the policy acted.
   */
  maskedActRows: number;
  skippedEpisodes: number;
  rows: { act: number; rehearse: number };
  /** Rows by `role/source`, e.g. `rehearse/actual`. */
  bySource: Record<string, number>;
  /** Distinct tasks with at least one row written. */
  tasks: string[];
  /** Runs left out by the `runs` filter. */
  skippedRuns: number;
  /** Calls left out by the `tools` and `onlyMismatches` filters. */
  filteredCalls: number;
  skippedLines: number;
  /** Calls written with annotations. */
  annotatedCalls: number;
  /** Lines of annotations files that were not applied (torn, invalid). */
  skippedAnnotationLines: number;
}

/** Whether a call's rehearsal missed: not exact, or unparsable, with an actual response to learn from. */
export function isMismatch(
  rehearsal: CallRehearsalEvent | undefined,
  actual: CallActualEvent | undefined,
): boolean {
  const comparison = compareCall(rehearsal, actual);
  if (comparison.comparable !== 'none') return !comparison.scores.exactMatch;
  return comparison.reason === 'rehearsal-parse-error' && !!actual?.response;
}

interface EpisodeEvents {
  start: EpisodeEvent;
  turns: TurnEvent[];
  rehearsals: Map<string, CallRehearsalEvent>;
  actuals: Map<string, CallActualEvent>;
  end?: EpisodeEndEvent;
}

/** The rehearse target for a real tool response: its JSON as the rehearse role writes it. */
export function actualRehearsalTarget(event: CallActualEvent): string | undefined {
  if (!event.response) return undefined;
  const value = actualValue(event.response);
  let json: JsonValue;
  if (value.kind === 'json') json = value.value;
  else json = value.isError ? { error: value.text } : { result: value.text };
  // A rehearsal must be a non-empty object or an array (ARCHITECTURE.md, Protocol).
  if (isJsonObject(json) && Object.keys(json).length === 0) return undefined;
  if (!Array.isArray(json) && !isJsonObject(json)) json = { result: json };
  return formatRehearsal(canonicalJson(json));
}

/**
 * A row as a model with identifier slots reads it: messages first, then the target, one numbering.
 * `sampled`, the target as the model wrote it (its placeholders before they were revealed), is the
 * target when known: hiding the revealed text again would number the values it invented anew.
 */
export function hideRow(row: DatasetRow, sampled?: string): DatasetRow {
  const slots = new IdentifierSlots();
  const messages = slots.hideMessages(row.messages);
  return { ...row, messages, target: sampled ?? slots.hide(row.target) };
}

/**
 * A generation's row fields: the target without the end token when the policy never sampled one, and
 * a served model's sampled token ids and log-probs when the trace recorded them.
 */
function endToken(g: SampledText): Pick<DatasetRow, 'eos' | 'target_ids' | 'target_logprobs'> {
  return {
    ...(g.finish === 'stop' || g.finish === 'length' ? { eos: false } : {}),
    ...(g.sampledTokens
      ? { target_ids: g.sampledTokens.ids, target_logprobs: g.sampledTokens.logprobs }
      : {}),
  };
}

/** Whether an episode ended because a rehearsal did not parse (an imagined episode's world model broke). */
export function endedOnRehearsal(end: EpisodeEndEvent): boolean {
  return end.status === 'failed' && isRehearsalParseCode(end.error?.code);
}

/**
 * Rebuilds, from a trace, the exact conversations the policy saw, and writes them as training rows:
 * act rows (each turn's prompt and text) and rehearse rows (each call's rehearse prompt, with the real
 * response or the policy's own rehearsal as target). Tool messages are rebuilt with the runner's own
 * functions, so a row's prompt is byte for byte the prompt the policy was given.
 */
export async function exportRows(
  files: readonly string[],
  options: ExportOptions,
  writeRow: (row: DatasetRow) => void,
): Promise<ExportSummary> {
  const summary: ExportSummary = {
    episodes: 0,
    maskedActRows: 0,
    skippedEpisodes: 0,
    rows: { act: 0, rehearse: 0 },
    bySource: {},
    tasks: [],
    skippedRuns: 0,
    filteredCalls: 0,
    skippedLines: 0,
    annotatedCalls: 0,
    skippedAnnotationLines: 0,
  };
  const tasks = new Set<string>();
  const write = (plain: DatasetRow, sampled?: string) => {
    const row = options.identifierSlots ? hideRow(plain, sampled) : plain;
    writeRow(row);
    summary.rows[row.role]++;
    const key = `${row.role}/${row.source}`;
    summary.bySource[key] = (summary.bySource[key] ?? 0) + 1;
    if (row.task) tasks.add(row.task);
  };
  const rows: RowExport = {
    options,
    roles: new Set(options.roles ?? ['act', 'rehearse']),
    summary,
    write,
  };
  for (const file of files) await exportFile(rows, file);
  summary.tasks = [...tasks].sort();
  return summary;
}

/** What every file of an export shares: its options, the roles it writes, its summary and the row writer. */
interface RowExport {
  options: ExportOptions;
  roles: Set<'act' | 'rehearse'>;
  summary: ExportSummary;
  /** Writes a row; `sampled` is its target as the model wrote it ({@link hideRow}). */
  write: (row: DatasetRow, sampled?: string) => void;
}

/** Reads one trace file, gathering each episode's events, and writes an episode's rows when it ends. */
async function exportFile(rows: RowExport, file: string): Promise<void> {
  const { options, summary } = rows;
  let notes: AnnotationSet | undefined;
  if (options.annotations !== false && rows.roles.has('rehearse')) {
    notes = await readAnnotations(annotationsFileFor(file));
    summary.skippedAnnotationLines += notes.skippedCount;
  }
  let run: RunEvent | undefined;
  // The runs filter is decided at the run event (the first line); a run left out writes nothing.
  let excluded = false;
  const episodes = new Map<string, EpisodeEvents>();
  // Rows go out in the run's planned episode order, also when episodes were played at once.
  const ended = new PlannedOrder<EpisodeEvents>((ep) => emitEpisode(rows, ep, run, notes));
  const result = await readTrace(file, {
    onEvent: (e: TraceEvent) => {
      if (e.type === 'run') {
        run ??= e;
        if (options.runs && !options.runs.has(e.runId)) {
          excluded = true;
          summary.skippedRuns++;
        }
        return;
      }
      if (excluded) return;
      if (e.type === 'episode') {
        episodes.set(e.episodeId, {
          start: e,
          turns: [],
          rehearsals: new Map(),
          actuals: new Map(),
        });
        return;
      }
      if (e.type === 'run.end' || e.type === 'fidelity') return;
      const ep = episodes.get(e.episodeId);
      if (!ep) return;
      if (e.type === 'turn') ep.turns.push(e);
      else if (e.type === 'call.rehearsal') ep.rehearsals.set(e.callId, e);
      else if (e.type === 'call.actual') ep.actuals.set(e.callId, e);
      else if (e.type === 'episode.end') {
        ep.end = e;
        ended.add(e.episodeId, ep);
        episodes.delete(e.episodeId);
      }
    },
  });
  ended.flush();
  summary.skippedLines += result.skippedCount;
}

/** The recorded run's settings that decide how its rows are rebuilt. */
interface RecordedSettings {
  rehearsePrompt?: RehearsePromptOptions;
  sampling?: { act?: { temperature?: number }; rehearse?: { temperature?: number } };
  onParseError?: string;
  reward?: string;
  parse?: string;
}

/** One episode's rows in the making: what its turns' and calls' rows share. */
interface EpisodeRows {
  ep: EpisodeEvents;
  notes: AnnotationSet | undefined;
  settings: RecordedSettings;
  promptOptions: RehearsePromptOptions;
  examples: RecordedExample[] | undefined;
  tools: ToolDefinition[];
  base: Pick<DatasetRow, 'v' | 'reward' | 'group' | 'finished' | 'task' | 'episode'>;
  rowReward: (text: string) => number | null;
  /** A rollout row's `temperature` field: its role's sampling temperature, when it sampled (> 0). */
  sampledAt: (role: 'act' | 'rehearse') => Pick<DatasetRow, 'temperature'>;
  /** Rollouts: the episode's act rows are left out ({@link endedOnRehearsal}). */
  masksAct: boolean;
}

/**
 * EnvACE's few-shot for a demonstration's rehearse rows: every call of the record the episode
 * exports to (`--format envace`), with its tool message as written there. EnvACE's simulator shows
 * a sample's own reference conversation (`build_few_shot_examples_lines`), so a task with no
 * examples of its own gets these under the `envace` profile, as `import envace --own-examples` would.
 */
function recordExamples(ep: EpisodeEvents): RecordedExample[] {
  const calls: RecordedCall[] = [];
  for (const turn of ep.turns) {
    if (turn.parse.kind !== 'calls') continue;
    for (const call of turn.parse.calls) {
      const actual = ep.actuals.get(call.callId);
      if (actual)
        calls.push({
          tool: call.name,
          arguments: call.arguments,
          response: { text: [envaceRecordToolText(actual)] },
        });
    }
  }
  // Read back as `import envace --own-examples` reads the record's tool messages.
  return examplePairs(calls, parsePythonJson);
}

/** Writes an ended episode's rows, unless it is left out (cancelled, ungraded rollout, not successful when asked). */
function emitEpisode(
  rows: RowExport,
  ep: EpisodeEvents,
  run: RunEvent | undefined,
  notes: AnnotationSet | undefined,
): void {
  const { options, summary } = rows;
  const ungradedRollout = options.actSource === 'rollout' && ep.end?.reward === null;
  if (
    !ep.end ||
    ep.end.status === 'cancelled' ||
    ungradedRollout ||
    (options.onlySuccessful && ep.end.success !== true)
  ) {
    summary.skippedEpisodes++;
    return;
  }
  summary.episodes++;
  const settings = (run?.settings ?? {}) as RecordedSettings;
  const info = options.taskInfo?.(ep.start.taskId);
  const system = ep.start.system ?? info?.system;
  const reward = ep.end.reward;
  const group =
    options.actSource === 'rollout' ? (options.group?.(ep.start.taskId) ?? ep.start.taskId) : null;
  const base = {
    v: 1 as const,
    reward: options.actSource === 'rollout' ? reward : null,
    group,
    ...(options.actSource === 'rollout' ? { finished: ep.end.status === 'completed' } : {}),
    task: ep.start.taskId,
    episode: ep.start.episodeId,
  };
  const promptOptions = options.rehearsePrompt ?? settings.rehearsePrompt ?? {};
  const episode: EpisodeRows = {
    ep,
    notes,
    settings,
    promptOptions,
    examples:
      !info?.examples?.length &&
      promptOptions.profile === 'envace' &&
      options.actSource === 'demonstration'
        ? recordExamples(ep)
        : info?.examples,
    tools: ep.start.tools ?? [],
    base,
    masksAct: options.actSource === 'rollout' && endedOnRehearsal(ep.end),
    // A run under EnvACE's rule: each row's reward loses EnvACE's invalid-action penalty when its text is empty.
    rowReward: (text: string) =>
      base.reward !== null && settings.reward === 'envace'
        ? envaceRowReward(base.reward, text)
        : base.reward,
    sampledAt: (role) => {
      const t =
        options.actSource === 'rollout' ? settings.sampling?.[role]?.temperature : undefined;
      return typeof t === 'number' && t > 0 ? { temperature: t } : {};
    },
  };
  const messages: ChatMessage[] = episodeMessages(system, ep.start.context);
  for (const turn of ep.turns) emitTurn(rows, episode, turn, messages);
  if (options.actSource !== 'demonstration' || !rows.roles.has('act') || ep.start.context) return;
  for (const [i, memory] of (options.memories?.(ep.start.taskId) ?? []).entries()) {
    const actOnly: RowExport = {
      ...rows,
      roles: new Set(['act']),
      write: (row, sampled) => rows.write({ ...row, id: `${row.id}/memory-${i + 1}` }, sampled),
    };
    const withMemory = episodeMessages(system, memory);
    for (const turn of ep.turns) emitTurn(actOnly, episode, turn, withMemory);
  }
}

/**
 * The rehearsal memories of private-rehearsal runs, by task: the context each committed episode
 * read (`rehearse export --memory-from`), at most `perTask` a task.
 */
export async function readMemories(
  files: readonly string[],
  perTask = 4,
): Promise<Map<string, string[]>> {
  const memories = new Map<string, string[]>();
  for (const file of files)
    await readTrace(file, {
      onEvent: (e: TraceEvent) => {
        if (e.type !== 'episode' || e.role !== 'committed' || !e.context) return;
        const list = memories.get(e.taskId) ?? [];
        if (list.length < perTask) memories.set(e.taskId, [...list, e.context]);
      },
    });
  return memories;
}

/** Writes one turn's act row and its calls' rehearse rows, and adds to `messages` what the policy read after it. */
function emitTurn(
  rows: RowExport,
  episode: EpisodeRows,
  turn: TurnEvent,
  messages: ChatMessage[],
): void {
  const { options, roles } = rows;
  const { ep, settings, base } = episode;
  if (turn.user !== undefined) messages.push({ role: 'user', content: turn.user });
  const history = [...messages];
  const lastTurn = turn === ep.turns[ep.turns.length - 1];
  if (roles.has('act') && (options.actRows !== 'episode' || lastTurn) && episode.masksAct)
    rows.summary.maskedActRows++;
  else if (roles.has('act') && (options.actRows !== 'episode' || lastTurn)) {
    rows.write(
      {
        ...base,
        reward: episode.rowReward(turn.text),
        id: `${ep.start.episodeId}/${turn.turnId}/act`,
        role: 'act',
        messages: history,
        tools: episode.tools.map(toFunctionSchema),
        target: turn.text,
        weight: 1,
        source: options.actSource,
        ...episode.sampledAt('act'),
        ...endToken(turn),
        ...(options.actRows === 'episode' ? { train_history: true } : {}),
      },
      turn.sampled,
    );
  }
  messages.push({ role: 'assistant', content: turn.text });
  if (turn.parse.kind === 'error') {
    if (settings.onParseError === 'feedback')
      messages.push(
        parseErrorToolMessage(
          turn.text,
          turn.parse,
          isParseDialect(settings.parse) ? settings.parse : 'studio',
        ),
      );
    return;
  }
  if (turn.parse.kind !== 'calls') return;
  for (const call of turn.parse.calls) {
    const rehearsal = ep.rehearsals.get(call.callId);
    const actual = ep.actuals.get(call.callId);
    const selected =
      (!options.tools || options.tools.has(call.name)) &&
      (!options.onlyMismatches || isMismatch(rehearsal, actual));
    if (roles.has('rehearse') && !selected) rows.summary.filteredCalls++;
    if (roles.has('rehearse') && selected)
      emitCallRows(rows, episode, { call, rehearsal, actual, history, latestText: turn.text });
    messages.push({
      role: 'tool',
      name: call.name,
      content: toolTextRead(ep.start.mode, rehearsal, actual),
    });
  }
}

/** A call of a turn, with its recorded events and what its rehearse prompt is built from. */
interface CallInTurn {
  call: { callId: string; name: string; arguments: JsonValue };
  rehearsal: CallRehearsalEvent | undefined;
  actual: CallActualEvent | undefined;
  history: ChatMessage[];
  latestText: string;
}

/** Writes a call's rehearse rows: the real response as target, and (when asked) the policy's own rehearsal. */
function emitCallRows(rows: RowExport, episode: EpisodeRows, c: CallInTurn): void {
  const { options } = rows;
  const { ep, notes, base } = episode;
  const { call, rehearsal, actual } = c;
  const prompt = buildRehearsePrompt(
    {
      tools: episode.tools,
      examples: episode.examples,
      history: c.history,
      latestText: c.latestText,
      call: { name: call.name, arguments: call.arguments },
    },
    episode.promptOptions,
  );
  const annotated = notes?.forCall(call.callId) ?? [];
  const marks = annotated.length ? { annotations: rowAnnotations(annotated) } : {};
  const actualTarget =
    options.actualRehearsals && actual ? actualRehearsalTarget(actual) : undefined;
  if (actualTarget !== undefined) {
    const weight =
      options.callWeight?.(call.callId) ?? groundingWeight(notes?.summary(call.callId));
    rows.write({
      ...base,
      reward: null,
      group: null,
      id: `${ep.start.episodeId}/${call.callId}/rehearse-actual`,
      role: 'rehearse',
      messages: prompt,
      target: actualTarget,
      weight,
      source: 'actual',
      call: call.callId,
      ...marks,
    });
  }
  if (options.policyRehearsals && rehearsal) {
    // The policy's own rehearsal as target: its annotations go with it, its weight is not raised.
    const weight = options.callWeight?.(call.callId) ?? 1;
    // Samples that did not parse and were drawn again: each earns what an episode it ended earns.
    // Rollouts only: a rejected sample is never a demonstration.
    const rejected = base.reward === null ? [] : (rehearsal.rejected ?? []);
    // A sample of the policy's as a rehearse row: the tokens it sampled, at its role's temperature.
    const sampleRow = (sample: SampledText & { text: string }, id: string, reward: number | null) =>
      rows.write(
        {
          ...base,
          reward,
          id: `${ep.start.episodeId}/${call.callId}/${id}`,
          role: 'rehearse',
          messages: prompt,
          target: sample.text,
          weight,
          source: options.actSource,
          ...episode.sampledAt('rehearse'),
          ...endToken(sample),
          call: call.callId,
          ...(sample === rehearsal ? marks : { finished: false }),
        },
        sample.sampled,
      );
    for (const [i, r] of rejected.entries()) sampleRow(r, `rehearse-rejected-${i + 1}`, 0);
    sampleRow(rehearsal, 'rehearse', episode.rowReward(rehearsal.text));
  }
  if (annotated.length && (actualTarget !== undefined || (options.policyRehearsals && rehearsal)))
    rows.summary.annotatedCalls++;
}

/** The tool message the policy read: the actual response (shadow) or its own rehearsal (imagine). */
function toolTextRead(
  mode: EpisodeEvent['mode'],
  rehearsal: CallRehearsalEvent | undefined,
  actual: CallActualEvent | undefined,
): string {
  if (mode === 'imagine') {
    return !rehearsal
      ? actualToolText(undefined, actual?.error)
      : rehearsal.result.ok
        ? rehearsedToolResult(rehearsal.result.value).text![0]
        : simulatorErrorText(rehearsal.result.code, rehearsal.result.message);
  }
  return actualEventToolText(actual);
}
