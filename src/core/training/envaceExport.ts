import { StudioError } from '../base/errors';
import { removeBlocks, stripAsciiWhitespace } from '../protocol/text';
import type { ToolDefinition } from '../protocol/types';
import { jsonTextWithLiterals } from '../protocol/pythonJsonLoads';
import { actualOutcome, episodeMessages } from '../runner/episode';
import { envaceRecordToolText, parseErrorToolMessage } from '../runner/toolMessages';
import { envaceToolSchema, envaceToolSchemaFault } from '../protocol/envaceTools';
import type { TaskFile } from '../tasks/format/taskFile';
import type {
  ChecklistSource,
  EnvaceChecklistItem,
  TurnSteps,
  UnfaithfulItem,
} from './envaceChecklist';
import { envaceChecklist } from './envaceChecklist';
import { readTrace } from '../trace/format/reader';
import type { TranscriptCall } from '../tasks/checks/transcript';
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
  /** A tool message's name: `error_tool_call` on the message that reports an act that did not parse. */
  name?: string;
}

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
  /** The task files by id: their checks become the checklist (else one item per recorded call). */
  tasks?: ReadonlyMap<string, TaskFile>;
}

/** What the EnvACE export wrote and left out, with why. */
export interface EnvaceExportSummary {
  records: number;
  tasks: string[];
  skipped: { episode: string; reason: string }[];
  skippedLines: number;
  /** How many records' checklists came from the task's checks, and how many from recorded calls. */
  checklists: Record<ChecklistSource, number>;
  /** Records that end on an act that did not parse: its `error_tool_call`, as EnvACE's episode ends. */
  unparsed: { episode: string; task: string; turn: string; code: string }[];
  /** Items EnvACE's judge will not score as the studio did, record by record (see `placement`). */
  unfaithful: (UnfaithfulItem & { episode: string; task: string; scoreChange: number })[];
}

interface EpisodeParts {
  start: EpisodeEvent;
  turns: TurnEvent[];
  actuals: Map<string, CallActualEvent>;
}

/**
 * Turns recorded episodes into EnvACE tool-dataset records: each finished episode's conversation
 * with the real tools' responses (never the rehearsals), its tools and a checklist. An episode whose
 * act did not parse ends there, as EnvACE's does: the act's text and the `error_tool_call` tool
 * message envs.py writes. Episodes that cannot be written faithfully are left out with a reason: a
 * call with no recorded actual response (imagine mode without audit). A tool whose input schema
 * EnvACE's dataset would drop the record for is refused (ENVACE_TOOL_SCHEMA_INVALID).
 */
export async function exportEnvace(
  files: readonly string[],
  options: EnvaceExportOptions,
  write: (record: EnvaceRecord) => void,
): Promise<EnvaceExportSummary> {
  const summary: EnvaceExportSummary = {
    records: 0,
    tasks: [],
    skipped: [],
    skippedLines: 0,
    checklists: { checks: 0, calls: 0 },
    unparsed: [],
    unfaithful: [],
  };
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
          if (ep) exportEpisode(ep, e, { options, envaceDialect, summary, tasks, write });
        }
      },
    });
    summary.skippedLines += result.skippedCount;
  }
  summary.tasks = [...tasks].sort();
  return summary;
}

/** Where {@link exportEpisode} writes, and what it goes by. */
interface EpisodeExport {
  options: EnvaceExportOptions;
  /** The episode's run parsed in the envace dialect: non-finite numbers are written as literals. */
  envaceDialect: boolean;
  summary: EnvaceExportSummary;
  tasks: Set<string>;
  write: (record: EnvaceRecord) => void;
}

/**
 * Writes one ended episode as an EnvACE record, or notes in the summary why it is left out
 * (cancelled, not a success when only successes are asked for, imagined, unfaithful).
 */
function exportEpisode(ep: EpisodeParts, end: EpisodeEndEvent, into: EpisodeExport): void {
  const { options, envaceDialect, summary, tasks, write } = into;
  const skip = (reason: string) => {
    summary.skipped.push({ episode: ep.start.episodeId, reason });
  };
  if (end.status === 'cancelled') return skip('the episode was cancelled');
  if (options.onlySuccessful && end.success !== true) return skip('not graded a success');
  if (ep.start.role === 'imagined') return skip('an imagined episode of private rehearsal');
  const task = options.tasks?.get(ep.start.taskId);
  const system = ep.start.system ?? task?.system;
  const tools: ToolDefinition[] = ep.start.tools ?? [];
  for (const tool of tools) {
    const fault = envaceToolSchemaFault(tool);
    if (fault)
      throw new StudioError(
        'ENVACE_TOOL_SCHEMA_INVALID',
        `Tool ${tool.name} (task ${ep.start.taskId}, episode ${ep.start.episodeId}): ${fault.path} of its input schema ${fault.problem}. EnvACE's dataset (verl's OpenAIFunctionToolSchema in checklist_dataset.py) would drop the record without a word: fix the tool's schema (an enum is a list of values), or leave out the runs that hold it (--runs).`,
        { tool: tool.name, task: ep.start.taskId, episode: ep.start.episodeId, path: fault.path },
      );
  }
  const conversation = episodeConversation(ep, system, envaceDialect);
  if (typeof conversation === 'string') return skip(conversation);
  const { messages, steps, unparsed } = conversation;
  const firstUser = messages.findIndex((m) => m.role === 'user');
  if (firstUser < 0) return skip('the episode has no user message');
  // EnvACE plays every user turn of a record from its messages (interaction.py reads the next user
  // message there): an episode that ended early still carries the task's later user turns.
  for (const later of task?.turns.slice(steps.length) ?? [])
    messages.push({ role: 'user', content: later.user });
  const verdicts = new Map((end.checks ?? []).map((c) => [c.id, c.passed]));
  const { checklist, source, unfaithful } = envaceChecklist(task, { steps, verdicts });
  summary.checklists[source]++;
  if (unparsed)
    summary.unparsed.push({ episode: ep.start.episodeId, task: ep.start.taskId, ...unparsed });
  for (const u of unfaithful) {
    // reward_manager/checklist.py divides the turns' sum by the task's user turns.
    const change = ((Number(u.envace) - Number(u.studio)) * u.weight) / checklist.length;
    summary.unfaithful.push({
      episode: ep.start.episodeId,
      task: ep.start.taskId,
      ...u,
      scoreChange: Math.round(change * 1e6) / 1e6,
    });
  }
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

/**
 * An assistant message's content as EnvACE's caller writes it: Qwen3 generates with
 * `enable_thinking=True` (run_checklist_share.sh), so its text opens with a `<think>` block, which
 * `get_messages_str_v2` (checklist_reward.py) takes as the thinking, the rest as the user-visible
 * reply; without one it reads the whole text as thinking and the reply as "None". A text without a
 * block gets the empty one Qwen3's template writes (`<think>\n\n</think>\n\n`).
 */
export function envaceAssistantContent(text: string): string {
  return /<think>[\s\S]*?<\/think>/.test(text) ? text : `<think>\n\n</think>\n\n${text}`;
}

/**
 * The episode's conversation as EnvACE messages (system, user, assistant with tool calls, tool
 * answers from the real tools) and its calls by user turn and step; or why it cannot be written. An
 * act that did not parse ends it (envs.py: the text as the assistant's content, no tool calls, then
 * the `error_tool_call` tool message, and the episode is over).
 */
function episodeConversation(
  ep: EpisodeParts,
  system: string | undefined,
  envaceDialect: boolean,
):
  | {
      messages: EnvaceMessage[];
      steps: TurnSteps;
      unparsed?: { turn: string; code: string };
    }
  | string {
  // What the policy read: the task's system prompt, then a committed episode's rehearsal memory.
  const messages: EnvaceMessage[] = episodeMessages(system, ep.start.context).map((m) => ({
    role: 'system',
    content: m.content,
  }));
  const steps: TurnSteps = [];
  for (const turn of ep.turns) {
    if (turn.user !== undefined) {
      messages.push({ role: 'user', content: turn.user });
      steps.push([]);
    }
    const step: TranscriptCall[] = [];
    steps[steps.length - 1]?.push(step);
    if (turn.parse.kind === 'error') {
      messages.push({ role: 'assistant', content: envaceAssistantContent(turn.text) });
      messages.push(
        parseErrorToolMessage(turn.text, turn.parse, envaceDialect ? 'envace' : 'studio'),
      );
      return { messages, steps, unparsed: { turn: turn.turnId, code: turn.parse.code } };
    }
    if (turn.parse.kind !== 'calls') {
      messages.push({ role: 'assistant', content: envaceAssistantContent(turn.text) });
      continue;
    }
    const calls = turn.parse.calls;
    for (const call of calls)
      if (!ep.actuals.has(call.callId)) return `call ${call.callId} has no actual response`;
    messages.push({
      role: 'assistant',
      content: envaceAssistantContent(
        stripAsciiWhitespace(removeBlocks(turn.text, '<tool_call>', '</tool_call>')),
      ),
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
        content: envaceRecordToolText(actual),
      });
      step.push({ name: call.name, arguments: call.arguments, outcome: actualOutcome(actual) });
    }
  }
  return { messages, steps };
}
