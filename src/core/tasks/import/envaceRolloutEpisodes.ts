import { createHash } from 'node:crypto';
import type { JsonValue } from '../../base/json';
import { isJsonObject } from '../../base/json';
import { canonicalJson } from '../../base/canonicalJson';
import type { ActParse, ParsedToolCall } from '../../protocol/actParser';
import { parseActOutput, TOOL_CALL_START } from '../../protocol/actParser';
import type { RehearsalParse } from '../../protocol/rehearsalParser';
import { parseRehearsalOutput, THINK_CLOSE, THINK_OPEN } from '../../protocol/rehearsalParser';
import type { ParseOptions } from '../../protocol/dialect';
import { parsePythonJson } from '../../protocol/pythonJsonLoads';
import { stripPythonWhitespace } from '../../protocol/pythonText';
import { findBlocks, stripAsciiWhitespace } from '../../protocol/text';
import type { ToolDefinition } from '../../protocol/types';
import {
  generationTail,
  splitFirstPrompt,
  toolsInPrompt,
  userAfterAnswer,
} from './envacePromptText';
import type { RolloutRow } from './envaceRolloutFiles';

/*
 * The dump names no trajectory (envaceRolloutFiles.ts), so episodes are rebuilt from the text:
 * - EnvACE's caller keeps its prompt as tokens and only appends to it
 *   (`use_caller_incremental`, on in `run_checklist_share.sh:98,204`; `envs.py:613-731`), so the prompt
 *   of turn t+1 starts with the prompt of turn t, whose generation prompt (its last line,
 *   `assistant\n` for Qwen3 with special tokens removed) is followed by the re-rendered turn t.
 *   A row's parent is the row with the longest such prefix whose tool calls are the ones rendered.
 * - A simulator row names its call at the end of its prompt (`simulate_core/_builders.py:199-205`);
 *   its parsed output is the tool message EnvACE appends (`tool_simulator_agent.py:286-293`,
 *   `envs.py:311-320`), rendered in the next prompt as `<tool_response>\n...\n</tool_response>`.
 *   A call whose response is no simulator row's came from EnvACE's tool layer (a cached dataset
 *   answer or a schema error, `mcp_tool.py:516-547`): that is its actual response.
 * - Every text is parsed as EnvACE's Python read it (the `envace` dialect: `json.loads` takes NaN,
 *   the caller's text is guarded first), so that a call EnvACE executed is a call here too, and the
 *   next prompt, which renders it, continues its trajectory.
 */

/** The rules EnvACE's own parsers follow (tool_parser.py, tool_simulator_agent.py). */
export const ROLLOUT_PARSE: ParseOptions = { dialect: 'envace' };

/** The first line of EnvACE's simulator system prompt (`simulate_core/prompts/simulator/validation_system_instruction.txt:1`). */
export const SIMULATOR_SYSTEM_MARKER = 'You are a precise tool simulator.';
const TOOL_NAME_MARKER = 'Current tool to simulate:\n- name: ';
const ARGUMENTS_MARKER = "- arguments (JSON, parsed from caller's tool_call):\n";
const TOOL_RESPONSE_OPEN = '<tool_response>\n';
const TOOL_RESPONSE_CLOSE = '\n</tool_response>';
/** Prefix positions tried per row: a prompt whose tool responses repeat the generation prompt is not searched further. */
const MAX_PREFIXES_TRIED = 1000;
/** The codes of EnvACE's simulator parse errors, as they appear in the tool message (`tool_simulator_agent.py:77-150`). */
const SIMULATOR_ERROR_CODES = new Set([
  'EMPTY_SIMULATOR_OUTPUT',
  'NO_EXECUTION_RESULT_TAG_FOUND',
  'EXECUTION_RESULT_TAG_MALFORMED',
  'SIMULATOR_JSON_DECODE_ERROR',
  'INVALID_EXECUTION_RESULT_TYPE',
  'NON_SERIALIZABLE_EXECUTION_RESULT',
]);

/** A call of a rebuilt turn, with the rehearsal and the actual response the dump holds for it. */
export interface RolloutCall {
  name: string;
  arguments: JsonValue;
  rehearsal?: { text: string; parse: RehearsalParse };
  /** The tool message EnvACE's tool layer gave, when no simulator row answered the call. */
  actual?: string;
}

/** One caller turn of a rebuilt episode. */
export interface RolloutTurn {
  row: RolloutRow;
  /** The user message rendered before this turn, after a final answer (a checklist's next user turn). */
  user?: string;
  parse: ActParse;
  calls: RolloutCall[];
}

/** One rebuilt episode: the caller turns of one trajectory, first to last. */
export interface RolloutEpisode {
  /** Episodes that share their first prompt (a GRPO group) share this index. */
  taskIndex: number;
  /** The decoded prompt of the first turn. */
  prompt: string;
  /** Its system message and first user message, when the prompt shows where they part. */
  system?: string;
  instruction?: string;
  /** The tools of its `<tools>` section. */
  tools: ToolDefinition[];
  turns: RolloutTurn[];
}

/** The episodes of one step, and the rows that went into none. */
export interface RolloutEpisodes {
  episodes: RolloutEpisode[];
  /** Rows repeated verbatim (verl's padding copies), read once. */
  repeatedRows: number;
  /** Simulator rows that matched no call of any episode. */
  unlinkedRehearsals: number;
}

interface CallerNode {
  row: RolloutRow;
  copies: number;
  parse: ActParse;
  parent?: CallerNode;
  children: CallerNode[];
}

interface SimulatorRow {
  row: RolloutRow;
  parse: RehearsalParse;
  linked: boolean;
}

/** True for a row of the Tool Simulator Agent (its prompt is EnvACE's simulator prompt). */
export function isSimulatorRow(row: RolloutRow): boolean {
  return row.input.includes(SIMULATOR_SYSTEM_MARKER) && row.input.includes(TOOL_NAME_MARKER);
}

/** Rebuilds the episodes of one step's rows: caller turns chained by prompt, calls linked to their rehearsals. */
export function rebuildEpisodes(rows: readonly RolloutRow[]): RolloutEpisodes {
  const unique = new Map<string, { row: RolloutRow; copies: number }>();
  for (const row of rows) {
    // A digest, not the texts joined: the keys would hold a second copy of every row.
    const key = createHash('sha256')
      .update(row.input)
      .update('\u0000')
      .update(row.output)
      .update(`\u0000${row.score}`)
      .digest('base64');
    const seen = unique.get(key);
    if (seen) seen.copies++;
    else unique.set(key, { row, copies: 1 });
  }
  const callers: CallerNode[] = [];
  const simulators = new Map<string, SimulatorRow[]>();
  for (const { row, copies } of unique.values()) {
    if (isSimulatorRow(row)) addSimulatorRow(simulators, row);
    else
      callers.push({ row, copies, parse: parseActOutput(row.output, ROLLOUT_PARSE), children: [] });
  }
  chainTurns(callers);
  const episodes = episodesOf(callers, simulators);
  let unlinked = 0;
  for (const list of simulators.values()) unlinked += list.filter((s) => !s.linked).length;
  return { episodes, repeatedRows: rows.length - unique.size, unlinkedRehearsals: unlinked };
}

function addSimulatorRow(simulators: Map<string, SimulatorRow[]>, row: RolloutRow): void {
  const key = simulatedCallKey(row.input);
  const list = simulators.get(key) ?? [];
  list.push({ row, parse: parseRehearsalOutput(row.output, ROLLOUT_PARSE), linked: false });
  simulators.set(key, list);
}

/** The call a simulator prompt asks for, as `name NUL canonical arguments` (arguments `?` when unreadable). */
function simulatedCallKey(prompt: string): string {
  const nameAt = prompt.lastIndexOf(TOOL_NAME_MARKER) + TOOL_NAME_MARKER.length;
  const nameEnd = prompt.indexOf('\n', nameAt);
  const name = prompt.slice(nameAt, nameEnd < 0 ? undefined : nameEnd).trim();
  const argsAt = prompt.lastIndexOf(ARGUMENTS_MARKER);
  const args = argsAt < 0 ? undefined : leadingJson(prompt.slice(argsAt + ARGUMENTS_MARKER.length));
  return `${name}\u0000${args === undefined ? '?' : canonicalJson(args)}`;
}

function callKey(call: ParsedToolCall): string {
  return `${call.name}\u0000${canonicalJson(call.arguments)}`;
}

/** The JSON object or array at the start of `text` (after whitespace), or undefined. */
function leadingJson(text: string): JsonValue | undefined {
  const start = text.search(/\S/);
  if (start < 0 || (text[start] !== '{' && text[start] !== '[')) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if ((ch === '}' || ch === ']') && --depth === 0) {
      const parsed = parsePythonJson(text.slice(start, i + 1));
      return parsed.ok ? parsed.value : undefined;
    }
  }
  return undefined;
}

/** Links every caller row to the turn before it (shortest prompts first, so parents are known). */
function chainTurns(callers: CallerNode[]): void {
  callers.sort((a, b) => a.row.input.length - b.row.input.length || a.row.line - b.row.line);
  const byPrompt = new Map<string, CallerNode[]>();
  const lengths = new Set<number>();
  for (const node of callers) {
    const parent = findParent(node.row.input, byPrompt, lengths);
    if (parent) {
      parent.children.push(node);
      node.parent = parent;
    }
    const list = byPrompt.get(node.row.input) ?? [];
    list.push(node);
    byPrompt.set(node.row.input, list);
    lengths.add(node.row.input.length);
  }
}

/** The row of the previous turn: the longest earlier prompt that `input` continues with that turn's calls. */
function findParent(
  input: string,
  byPrompt: Map<string, CallerNode[]>,
  lengths: Set<number>,
): CallerNode | undefined {
  const tail = generationTail(input);
  if (tail === '') return undefined;
  let at = input.lastIndexOf(tail, input.length - tail.length - 1);
  for (let tried = 0; at >= 0 && tried < MAX_PREFIXES_TRIED; tried++) {
    const end = at + tail.length;
    // Only a length some earlier prompt has is worth copying out and looking up.
    const candidates = lengths.has(end) ? byPrompt.get(input.slice(0, end)) : undefined;
    const continuation = candidates ? renderedTurn(input.slice(end)) : '';
    const parent = candidates?.find(
      (c) => c.children.length < c.copies && rendersTurn(c.parse, continuation),
    );
    if (parent) return parent;
    at = at > 0 ? input.lastIndexOf(tail, at - 1) : -1;
  }
  return undefined;
}

/** The re-rendered assistant message at the start of a continuation: up to its first tool response. */
function renderedTurn(continuation: string): string {
  const stop = continuation.indexOf(TOOL_RESPONSE_OPEN);
  // A chat template writes the first call right after the role line when the message has no text.
  return '\n' + (stop < 0 ? continuation : continuation.slice(0, stop));
}

/**
 * True when `rendered` shows the parsed turn: the same tool calls (none for a final answer), and the
 * same reasoning and text before them, which tell apart samples of a group that made the same call.
 */
function rendersTurn(turn: ActParse, rendered: string): boolean {
  const shown = parseActOutput(rendered, ROLLOUT_PARSE);
  if (turn.kind === 'final') return shown.kind === 'final' && sameProse(turn.text, rendered, true);
  if (turn.kind !== 'calls' || shown.kind !== 'calls' || shown.calls.length !== turn.calls.length)
    return false;
  return (
    turn.calls.every((call, i) => callKey(call) === callKey(shown.calls[i])) &&
    sameProse(turn.text, rendered, false)
  );
}

/** The reasoning and the text of a turn before its first call, each without surrounding whitespace. */
function prose(text: string): { think?: string; content: string } {
  const callAt = text.indexOf(TOOL_CALL_START);
  const head = callAt < 0 ? text : text.slice(0, callAt);
  const thinkEnd = head.lastIndexOf(THINK_CLOSE);
  if (thinkEnd < 0) return { content: stripAsciiWhitespace(head) };
  const thinkStart = head.lastIndexOf(THINK_OPEN, thinkEnd);
  return {
    think: stripAsciiWhitespace(
      head.slice(thinkStart < 0 ? 0 : thinkStart + THINK_OPEN.length, thinkEnd),
    ),
    content: stripAsciiWhitespace(head.slice(thinkEnd + THINK_CLOSE.length)),
  };
}

/**
 * True when the rendering keeps the turn's text (a final answer's rendering runs on into the next
 * user message), and its reasoning unless the template dropped it.
 */
function sameProse(output: string, rendered: string, final: boolean): boolean {
  const a = prose(output);
  const b = prose(rendered);
  const content = final ? b.content.startsWith(a.content) : a.content === b.content;
  return content && (b.think === undefined || a.think === undefined || a.think === b.think);
}

/** A call of a last turn: no later prompt shows its response, so its simulator row is found by the call alone. */
interface UnansweredCall {
  call: RolloutCall;
  key: string;
}

/** One episode per last turn (a row no later turn continues), in the order of the dump. */
function episodesOf(
  callers: CallerNode[],
  simulators: Map<string, SimulatorRow[]>,
): RolloutEpisode[] {
  const leaves = callers.filter((n) => n.children.length === 0);
  const paths = leaves.map((leaf) => {
    const path: CallerNode[] = [];
    for (let n: CallerNode | undefined = leaf; n; n = n.parent) path.unshift(n);
    return path;
  });
  paths.sort(
    (a, b) => a[0].row.line - b[0].row.line || a[a.length - 1].row.line - b[b.length - 1].row.line,
  );
  const tasks = new Map<string, number>();
  const unanswered: UnansweredCall[] = [];
  const episodes = paths.map((path) => {
    const prompt = path[0].row.input;
    if (!tasks.has(prompt)) tasks.set(prompt, tasks.size);
    const turns = path.map((node, i) =>
      turnOf(node, path[i - 1], path[i + 1], simulators, unanswered),
    );
    return {
      taskIndex: tasks.get(prompt)!,
      prompt,
      ...splitFirstPrompt(prompt, generationTail(prompt)),
      tools: toolsInPrompt(prompt),
      turns,
    };
  });
  // After every answered call took its row: a row left for the same call, one that failed to parse
  // first (EnvACE ends the episode on it; a parsed one would have led to a next turn).
  for (const { call, key } of unanswered) {
    const left = (simulators.get(key) ?? []).filter((s) => !s.linked);
    const row = left.find((s) => !s.parse.ok) ?? left[0];
    if (!row) continue;
    row.linked = true;
    call.rehearsal = { text: row.row.output, parse: row.parse };
  }
  return episodes;
}

/** A turn: its calls answered from the next prompt, and the user message after the previous turn's final answer. */
function turnOf(
  node: CallerNode,
  previous: CallerNode | undefined,
  next: CallerNode | undefined,
  simulators: Map<string, SimulatorRow[]>,
  unanswered: UnansweredCall[],
): RolloutTurn {
  const turn: RolloutTurn = {
    row: node.row,
    parse: node.parse,
    calls: callsOf(
      node.parse,
      next?.row.input.slice(node.row.input.length),
      simulators,
      unanswered,
    ),
  };
  if (previous?.parse.kind === 'final') {
    const thinkEnd = previous.parse.text.lastIndexOf(THINK_CLOSE);
    const answer =
      thinkEnd < 0 ? previous.parse.text : previous.parse.text.slice(thinkEnd + THINK_CLOSE.length);
    const user = userAfterAnswer(
      node.row.input.slice(previous.row.input.length),
      answer,
      generationTail(node.row.input),
    );
    if (user !== undefined) turn.user = user;
  }
  return turn;
}

/**
 * The calls of a turn with their responses, the tool responses rendered in the next prompt: a
 * simulator row that gave the response is the call's rehearsal, else the response is its actual.
 */
function callsOf(
  turn: ActParse,
  continuation: string | undefined,
  simulators: Map<string, SimulatorRow[]>,
  unanswered: UnansweredCall[],
): RolloutCall[] {
  if (turn.kind !== 'calls') return [];
  const responses =
    continuation === undefined
      ? []
      : findBlocks('\n' + continuation, TOOL_RESPONSE_OPEN, TOOL_RESPONSE_CLOSE).map(
          (b) => b.inner,
        );
  return turn.calls.map((parsed, i) => {
    const call: RolloutCall = { name: parsed.name, arguments: parsed.arguments };
    const response = responses[i] as string | undefined;
    if (response === undefined) {
      unanswered.push({ call, key: callKey(parsed) });
      return call;
    }
    const candidates = (simulators.get(callKey(parsed)) ?? []).filter((s) =>
      answers(s.parse, response),
    );
    const simulated = candidates.find((s) => !s.linked) ?? candidates[0];
    if (simulated) {
      simulated.linked = true;
      call.rehearsal = { text: simulated.row.output, parse: simulated.parse };
    } else {
      call.actual = response;
    }
    return call;
  });
}

/** True when a simulator output is the tool message EnvACE wrote: its JSON, or its error. */
function answers(rehearsal: RehearsalParse, response: string): boolean {
  const parsed = parsePythonJson(stripPythonWhitespace(response));
  if (!parsed.ok) return false;
  if (rehearsal.ok) return canonicalJson(rehearsal.value) === canonicalJson(parsed.value);
  const error = isJsonObject(parsed.value) ? parsed.value['error_tool_call'] : undefined;
  return (
    isJsonObject(error) &&
    typeof error['code'] === 'string' &&
    SIMULATOR_ERROR_CODES.has(error['code'])
  );
}
