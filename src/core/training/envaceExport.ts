import { canonicalJson } from '../base/canonicalJson';
import type { JsonObject, JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import { removeBlocks, stripAsciiWhitespace } from '../protocol/text';
import type { ToolDefinition } from '../protocol/types';
import { toFunctionSchema } from '../protocol/types';
import { jsonTextWithLiterals } from '../protocol/pythonJson';
import { episodeMessages } from '../runner/episode';
import { actualEventToolText } from '../runner/toolMessages';
import type { JudgeCheck, TaskFile } from '../tasks/format/taskFile';
import { readTrace } from '../trace/format/reader';
import type {
  CallActualEvent,
  EpisodeEndEvent,
  EpisodeEvent,
  TraceEvent,
  TurnEvent,
} from '../trace/format/schema';

/** One OpenAI-chat message of an EnvACE record. */
export interface EnvaceMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** Where an item's evidence is, in EnvACE's words (`evidence[].from`, `focus_on`). */
export type EnvaceFocus =
  | 'user.content'
  | 'assistant.content.thinking'
  | 'assistant.content.user_visible_reply'
  | 'assistant.tool_calls'
  | 'tool.content';

/**
 * One checklist item with every field EnvACE reads by key: `interaction.py` reads
 * `required_for_next_turn`, `focus_on` and `weight` of each item, `checklist_reward.py`
 * `question`, `focus_on`, `pass_condition`, `failure_examples` and `evidence[].snippet`
 * (agent_system/environments/env_package/checklist/). A missing key is a KeyError there, caught in
 * `envs.py`: the turn silently scores 0. So every key is written, empty when the studio has nothing.
 */
export interface EnvaceChecklistItem {
  id: string;
  question: string;
  focus_on: EnvaceFocus;
  pass_condition: string;
  failure_examples: string[];
  evidence: { turn: number; step: number; from: EnvaceFocus; snippet: string }[];
  required_for_next_turn: boolean;
  weight: number;
}

const FOCUS: readonly string[] = [
  'assistant.tool_calls',
  'assistant.content.thinking',
  'assistant.content.user_visible_reply',
  'tool.content',
];

/**
 * One record of EnvACE's tool dataset (the JSON at `+env.checklist.dataset_path`, and the rows of
 * its parquet files), in the field layout `agent_system/dataset/checklist_dataset.py` reads: the
 * prompt under `messages` (verl's `data.prompt_key=messages`), and under `extra_info` the `index`,
 * `original_index`, `tools` (a JSON string of OpenAI function schemas), the whole reference
 * conversation as `messages`, and `interaction_kwargs.checklist_list` (checklists, each a list of
 * user turns, each a list of items).
 */
export interface EnvaceRecord {
  data_source: string;
  messages: EnvaceMessage[];
  prompt: EnvaceMessage[];
  extra_info: {
    index: number;
    original_index: number;
    tools: string;
    messages: EnvaceMessage[];
    interaction_kwargs: { checklist_list: EnvaceChecklistItem[][][] };
    /** Where the record came from (ignored by EnvACE). */
    studio_task: string;
    studio_episode: string;
  };
}

/** What the EnvACE export takes. */
export interface EnvaceExportOptions {
  onlySuccessful?: boolean;
  runs?: ReadonlySet<string>;
  /** The task files by id: their judge checks become the checklist (else one item per reference call). */
  tasks?: ReadonlyMap<string, TaskFile>;
}

/** What the EnvACE export wrote and left out, with why. */
export interface EnvaceExportSummary {
  records: number;
  tasks: string[];
  skipped: { episode: string; reason: string }[];
  skippedLines: number;
}

interface EpisodeParts {
  start: EpisodeEvent;
  turns: TurnEvent[];
  actuals: Map<string, CallActualEvent>;
}

/** A property's JSON type as one string: verl takes `type: str` only. */
function propertyType(p: JsonObject): string {
  const t = p['type'];
  if (typeof t === 'string') return t;
  if (Array.isArray(t))
    return (t.find((x) => typeof x === 'string' && x !== 'null') as string | undefined) ?? 'string';
  for (const key of ['anyOf', 'oneOf']) {
    const branches = p[key];
    if (Array.isArray(branches)) {
      for (const b of branches)
        if (isJsonObject(b) && typeof b['type'] === 'string' && b['type'] !== 'null')
          return b['type'];
    }
  }
  if (Array.isArray(p['enum'])) return 'string';
  if (isJsonObject(p['properties'])) return 'object';
  if (p['items'] !== undefined) return 'array';
  return 'string';
}

/**
 * A tool as EnvACE's verl takes it (verl/tools/schemas.py, `OpenAIFunctionToolSchema`): a
 * `description` string, `parameters` with a string `type`, `properties` each with a string `type`
 * and string `enum` values, and a `required` list. A record whose tools fail that model is dropped
 * without a word by `ChecklistDataset._filter_invalid_tool_schemas`, so an MCP schema is written in
 * that shape: a list or union type becomes its first non-null type, enum values become strings, a
 * missing `required` an empty list. Other keys of a property (`items`, `properties`) are kept.
 */
export function envaceToolSchema(tool: ToolDefinition): {
  type: 'function';
  function: { name: string; description: string; parameters: JsonObject };
} {
  const base = toFunctionSchema(tool).function;
  const params = isJsonObject(base.parameters) ? base.parameters : {};
  const properties: JsonObject = {};
  for (const [name, value] of Object.entries(
    isJsonObject(params['properties']) ? params['properties'] : {},
  )) {
    const p = isJsonObject(value) ? value : {};
    const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = p;
    const out: JsonObject = { ...rest, type: propertyType(p) };
    if (typeof p['description'] !== 'string') delete out['description'];
    if (Array.isArray(p['enum']))
      out['enum'] = p['enum'].map((e) => (typeof e === 'string' ? e : canonicalJson(e)));
    properties[name] = out;
  }
  const required = Array.isArray(params['required'])
    ? params['required'].filter((r): r is string => typeof r === 'string')
    : [];
  return {
    type: 'function',
    function: {
      name: base.name,
      description: base.description,
      parameters: { ...params, type: 'object', properties, required },
    },
  };
}

/** The checklist items of one user turn made from its reference calls, when the task has no judge checks. */
function callItems(
  calls: { name: string; arguments: JsonValue }[],
  turn: number,
): EnvaceChecklistItem[] {
  return calls.map((c, k) => {
    const args = canonicalJson(c.arguments);
    return {
      id: `t${turn}-call-${k + 1}`,
      question: `Does the assistant call ${c.name} with the arguments ${args}?`,
      focus_on: 'assistant.tool_calls',
      pass_condition: `A ${c.name} call whose arguments match ${args}.`,
      failure_examples: [],
      evidence: [{ turn, step: k, from: 'assistant.tool_calls', snippet: `${c.name} ${args}` }],
      // Not strict: a derived item does not end an EnvACE episode early (the studio's grader never does).
      required_for_next_turn: false,
      weight: 1,
    };
  });
}

function judgeItems(checks: JudgeCheck[], turn: number): EnvaceChecklistItem[] {
  return checks
    .filter((c) => (c.turn ?? 0) === turn)
    .map((c, k) => {
      // EnvACE allows four places to look; a task's own free text falls back to the visible reply.
      const focus = (
        c.focus_on && FOCUS.includes(c.focus_on)
          ? c.focus_on
          : 'assistant.content.user_visible_reply'
      ) as EnvaceFocus;
      return {
        id: c.id ?? `t${turn}-judge-${k + 1}`,
        question: c.question,
        focus_on: focus,
        pass_condition: c.pass_condition ?? '',
        failure_examples: c.failure_examples ?? [],
        evidence: (c.evidence ?? []).map((snippet, step) => ({ turn, step, from: focus, snippet })),
        required_for_next_turn: c.required_for_next_turn ?? false,
        weight: c.weight ?? 1,
      };
    });
}

/**
 * Turns recorded episodes into EnvACE tool-dataset records: each finished episode's conversation
 * with the real tools' responses (never the rehearsals), its tools and a checklist. Episodes that
 * cannot be written faithfully are left out with a reason: an act turn that did not parse (EnvACE's
 * data holds valid calls only), or a call with no recorded actual response (imagine mode without audit).
 */
export async function exportEnvace(
  files: readonly string[],
  options: EnvaceExportOptions,
  write: (record: EnvaceRecord) => void,
): Promise<EnvaceExportSummary> {
  const summary: EnvaceExportSummary = { records: 0, tasks: [], skipped: [], skippedLines: 0 };
  const tasks = new Set<string>();
  // A run parsed in the envace dialect wrote non-finite numbers as EnvACE reads them back: literals.
  let envaceDialect = false;
  for (const file of files) {
    envaceDialect = false;
    const episodes = new Map<string, EpisodeParts>();
    let excluded = false;
    const result = await readTrace(file, {
      onEvent: (e: TraceEvent) => {
        if (e.type === 'run') {
          excluded = !!options.runs && !options.runs.has(e.runId);
          envaceDialect = (e.settings as { parse?: unknown } | undefined)?.parse === 'envace';
          return;
        }
        if (excluded) return;
        if (e.type === 'episode') {
          episodes.set(e.episodeId, { start: e, turns: [], actuals: new Map() });
          return;
        }
        if (e.type === 'turn') episodes.get(e.episodeId)?.turns.push(e);
        else if (e.type === 'call.actual') episodes.get(e.episodeId)?.actuals.set(e.callId, e);
        else if (e.type === 'episode.end') {
          const ep = episodes.get(e.episodeId);
          episodes.delete(e.episodeId);
          if (ep) emit(ep, e);
        }
      },
    });
    summary.skippedLines += result.skippedCount;
  }
  summary.tasks = [...tasks].sort();
  return summary;

  function emit(ep: EpisodeParts, end: EpisodeEndEvent): void {
    const skip = (reason: string) => {
      summary.skipped.push({ episode: ep.start.episodeId, reason });
    };
    if (end.status === 'cancelled') return skip('the episode was cancelled');
    if (options.onlySuccessful && end.success !== true) return skip('not graded a success');
    if (ep.start.role === 'imagined') return skip('an imagined episode of private rehearsal');
    const task = options.tasks?.get(ep.start.taskId);
    const system = ep.start.system ?? task?.system;
    const tools: ToolDefinition[] = ep.start.tools ?? [];
    // What the policy read: the task's system prompt, then a committed episode's rehearsal memory.
    const messages: EnvaceMessage[] = episodeMessages(system, ep.start.context).map((m) => ({
      role: 'system',
      content: m.content,
    }));
    const turnCalls: { name: string; arguments: JsonValue }[][] = [];
    for (const turn of ep.turns) {
      if (turn.user !== undefined) {
        messages.push({ role: 'user', content: turn.user });
        turnCalls.push([]);
      }
      if (turn.parse.kind === 'error')
        return skip(`turn ${turn.turnId} did not parse (${turn.parse.code})`);
      if (turn.parse.kind !== 'calls') {
        messages.push({ role: 'assistant', content: turn.text });
        continue;
      }
      const calls = turn.parse.calls;
      for (const call of calls)
        if (!ep.actuals.has(call.callId)) return skip(`call ${call.callId} has no actual response`);
      messages.push({
        role: 'assistant',
        content: stripAsciiWhitespace(removeBlocks(turn.text, '<tool_call>', '</tool_call>')),
        tool_calls: calls.map((c) => ({
          id: c.callId,
          type: 'function',
          function: {
            name: c.name,
            arguments: envaceDialect
              ? jsonTextWithLiterals(c.arguments)
              : JSON.stringify(c.arguments),
          },
        })),
      });
      for (const call of calls) {
        const actual = ep.actuals.get(call.callId)!;
        messages.push({
          role: 'tool',
          tool_call_id: call.callId,
          content: actualEventToolText(actual),
        });
        turnCalls[turnCalls.length - 1]?.push({ name: call.name, arguments: call.arguments });
      }
    }
    const firstUser = messages.findIndex((m) => m.role === 'user');
    if (firstUser < 0) return skip('the episode has no user message');
    const judges = (task?.checks ?? []).filter((c): c is JudgeCheck => c.kind === 'judge');
    const checklist = turnCalls.map((calls, turn) =>
      judges.length ? judgeItems(judges, turn) : callItems(calls, turn),
    );
    const prompt = messages.slice(0, firstUser + 1).map((m) => ({ ...m }));
    const index = summary.records++;
    tasks.add(ep.start.taskId);
    write({
      data_source: task?.domain ?? ep.start.taskId.split('-')[0] ?? 'rehearsal-studio',
      messages: prompt,
      prompt,
      extra_info: {
        index,
        original_index: index,
        tools: JSON.stringify(tools.map(envaceToolSchema)),
        messages,
        interaction_kwargs: { checklist_list: [checklist] },
        studio_task: ep.start.taskId,
        studio_episode: ep.start.episodeId,
      },
    });
  }
}
