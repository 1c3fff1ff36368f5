import type { JsonValue } from '../../base/json';
import type { ServerDefinition } from '../../env/serverDefinition';
import type { ParsedToolCall } from '../../protocol/actParser';
import type { RecordedExample } from '../../protocol/types';

/** The task format version this studio reads and writes. See docs/task-format.md. */
export const TASK_FORMAT_VERSION = 1;

/** The dataset split a task belongs to. */
export type TaskSplit = 'train' | 'validation' | 'test';

/** One user message; the agent answers each in turn. */
export interface UserTurn {
  user: string;
  /**
   * Tools offered from this turn on and held back before it (BFCL's miss_func: a function the model
   * cannot see until the user says it was added).
   */
  addTools?: string[];
}

/** The tools offered during user turn `turn`: all, less those a later turn adds. */
export function offeredTools<T extends { name: string }>(
  tools: readonly T[],
  turns: readonly UserTurn[],
  turn: number,
): T[] {
  const later = new Set(turns.slice(turn + 1).flatMap((t) => t.addTools ?? []));
  const now = new Set(turns.slice(0, turn + 1).flatMap((t) => t.addTools ?? []));
  return tools.filter((t) => now.has(t.name) || !later.has(t.name));
}

/** Episode limits. */
export interface TaskLimits {
  /** Most policy turns (acts) in the whole episode. */
  maxTurns?: number;
  /** Most tool calls in one act. */
  maxCallsPerTurn?: number;
  /** Limit of one tool call, in milliseconds. */
  callTimeoutMs?: number;
  /** Limit of the whole episode, in milliseconds. */
  episodeTimeoutMs?: number;
}

/**
 * How a value is matched, by exactly one operator: `equals` (JSON equality), `oneOf`, `contains`
 * (a string contains the text, ignoring case and runs of whitespace), `matches` (a regular
 * expression), `exists` (the value is present or absent).
 */
export interface Matcher {
  equals?: JsonValue;
  oneOf?: JsonValue[];
  contains?: string;
  matches?: string;
  exists?: boolean;
}

/** Fields every check has. */
export interface CheckBase {
  /** Stable id of the checklist item; `check-<index>` when absent. */
  id?: string;
  /** Weight in the reward (default 1). */
  weight?: number;
  /** What the item verifies, for people. */
  description?: string;
}

/** A final-state assertion: the value at a JSONPath in a server's snapshot. */
export interface StateCheck extends CheckBase, Matcher {
  kind: 'state';
  server: string;
  /** JSONPath into the snapshot, as fidelity diffs write it: `$.orders["#W1234567"].status`. */
  path: string;
}

/**
 * Argument matchers by key: a key starting with `$` is a JSONPath into the arguments
 * (`$.address.zip`), any other key a top-level argument name.
 */
export type ArgumentMatchers = { [keyOrPointer: string]: Matcher };

/** A required call: the agent made at least `min` calls of `tool` whose arguments match. */
export interface CallCheck extends CheckBase {
  kind: 'call';
  tool: string;
  args?: ArgumentMatchers;
  /** Only calls made while answering this user turn (0-based). */
  turn?: number;
  /** At least this many matching calls (default 1). */
  min?: number;
  /** At most this many matching calls (default: no limit): a write made twice changes twice. */
  max?: number;
  /** Only calls that returned a result that is not an error. */
  ok?: boolean;
}

/** A forbidden call: no call of `tool` with matching arguments reached the tool. */
export interface NoCallCheck extends CheckBase {
  kind: 'no_call';
  tool: string;
  args?: ArgumentMatchers;
  turn?: number;
}

/** The agent's answer (final text of a user turn) says what it should. */
export interface AnswerCheck extends CheckBase {
  kind: 'answer';
  /** The user turn whose answer is checked (0-based); the last one when absent. */
  turn?: number;
  /** Texts the answer contains (ignoring case and runs of whitespace). */
  contains?: string[];
  /** `all` (default): every text of `contains`; `any`: at least one. */
  mode?: 'all' | 'any';
  /** Numbers the answer states (thousands separators and currency signs ignored; equal to 2 decimals). */
  numbers?: number[];
  /** Texts the answer must not contain. */
  notContains?: string[];
}

/** An item judged by a model through an OpenAI-compatible endpoint (fields as EnvACE's checklist). */
export interface JudgeCheck extends CheckBase {
  kind: 'judge';
  question: string;
  focus_on?: string;
  pass_condition?: string;
  failure_examples?: string[];
  /** EnvACE's strictness: when the item fails, EnvACE ends the episode after this user turn. */
  required_for_next_turn?: boolean;
  /** Reference snippets that show a passing answer. */
  evidence?: string[];
  /** The user turn judged (0-based); the whole conversation when absent. */
  turn?: number;
}

/** Any checklist item. */
/**
 * A BFCL-v4 multi-turn record's verdict (docs/task-format.md, BFCL-v4): BFCL's state and response
 * checks after every user turn, computed in the studio's Python environment.
 */
export interface BfclCheck extends CheckBase {
  kind: 'bfcl';
  /** The record's id (`multi_turn_base_0`). */
  record: string;
  /** Its records file, relative to the task file; default: the installed bfcl-eval's. */
  records?: string;
  /** A bfcl_eval package folder used instead of the installed one, relative to the task file. */
  backend?: string;
  /** Per user turn, BFCL's ground-truth call strings. */
  groundTruth: string[][];
}

/** The τ²-bench domains the studio imports (trainer/tau2/domain.py DOMAINS). */
export const TAU2_DOMAINS = ['airline', 'retail', 'telecom', 'mock'] as const;

/** One of {@link TAU2_DOMAINS}. */
export type Tau2Domain = (typeof TAU2_DOMAINS)[number];

/**
 * A τ²-bench task's reward (docs/task-format.md, τ²-bench): τ²'s own evaluator, in the studio's
 * Python environment, on the episode rebuilt as τ²'s messages.
 */
export interface Tau2Check extends CheckBase {
  kind: 'tau2';
  domain: Tau2Domain;
  /** The task's τ² id. */
  task: string;
  /** A task file in τ²'s format that holds it, relative to the task file; default: the installed package's. */
  tasks?: string;
}

export type CheckSpec =
  StateCheck | CallCheck | NoCallCheck | AnswerCheck | JudgeCheck | BfclCheck | Tau2Check;

/**
 * One call of a reference solution: the agent's, or (`by: "user"`) one the task's user makes with a
 * tool of its own (τ²'s telecom user on its phone), at that place among the agent's calls.
 */
export interface ReferenceCall extends ParsedToolCall {
  by?: 'user';
}

/** The reference solution of one user turn: the calls, in order, then the final answer. */
export interface ReferenceTurn {
  calls: ReferenceCall[];
  answer: string;
}

/** A task's reference solution: one entry per user turn. */
export interface ReferenceSolution {
  turns: ReferenceTurn[];
}

/** A task file (schemas/task.schema.json). */
export interface TaskFile {
  $schema?: string;
  version: typeof TASK_FORMAT_VERSION;
  id: string;
  description?: string;
  domain?: string;
  split?: TaskSplit;
  /** Seed of the episode: servers with a reset tool are reset with it. */
  seed?: number;
  tags?: string[];
  /** The agent's system prompt (instructions, domain policy). */
  system?: string;
  turns: UserTurn[];
  /** A user who goes on talking after `turns` (docs/task-format.md, A user in the loop). */
  user?: TaskUser;
  /** The tool servers, by name: a definition, or the name of a configured server. */
  servers: { [name: string]: ServerDefinition | string };
  /** The tools the agent may call (all tools of the servers when absent). */
  tools?: string[];
  checks: CheckSpec[];
  limits?: TaskLimits;
  /** Recorded calls with their real results, shown to the rehearse role as few-shot pairs. */
  examples?: RecordedExample[];
  reference?: ReferenceSolution;
}

/**
 * How the user's conversation ends, shared by every kind of {@link TaskUser}: a user message that
 * holds one of `stop` ends it (τ²'s `###STOP###`, `###TRANSFER###`, `###OUT-OF-SCOPE###`, written by
 * the importer from the installed package); so does an answer of the agent in a user turn where it
 * called one of `endTools` (τ²'s `transfer_to_human_agents`); and `maxTurns` user messages after the
 * task's `turns` end it with `USER_TURN_LIMIT`.
 */
export interface TaskUserEnding {
  stop?: string[];
  endTools?: string[];
  /** Most user messages after the task's `turns` (default {@link DEFAULT_USER_TURNS}). */
  maxTurns?: number;
}

/** A recorded user (for tests): its messages in order, after the task's `turns`; it ends when they run out. */
export interface ScriptUser extends TaskUserEnding {
  kind: 'script';
  messages: string[];
}

/**
 * τ²-bench's own user simulator (its instructions and guidelines for the task's scenario), played by
 * an OpenAI-compatible endpoint the run names (`--user-endpoint`, `--user-model`).
 */
export interface Tau2User extends TaskUserEnding {
  kind: 'tau2';
  domain: Tau2Domain;
  /** The task's τ² id. */
  task: string;
  /** A task file in τ²'s format that holds it, relative to the task file. */
  tasks?: string;
  /**
   * The simulator writes the first message, in answer to τ²'s greeting, as in τ² (the importer sets
   * it for tasks without an earlier conversation); the task's first turn is its message only when no
   * endpoint plays the user.
   */
  opens?: boolean;
  /**
   * Most calls of its own tools (τ²'s telecom user on its phone) the user may make before one
   * message (default {@link DEFAULT_USER_TOOL_CALLS}); one more ends the episode `USER_TOOL_LIMIT`.
   */
  maxToolCalls?: number;
}

/** A user in the loop: after each answer of the agent past the task's `turns`, the next message or the end. */
export type TaskUser = ScriptUser | Tau2User;

/** Most user messages a {@link TaskUser} may add when the task names no `maxTurns`. */
export const DEFAULT_USER_TURNS = 30;

/** Most calls of its own tools a user may make before one message when the task names no `maxToolCalls`. */
export const DEFAULT_USER_TOOL_CALLS = 16;

/** A task as loaded: the file's content and where it came from. */
export interface LoadedTask {
  task: TaskFile;
  /** Absolute path of the file. */
  file: string;
  /** Folder relative paths in the task resolve against. */
  baseDir: string;
}

/** Defaults of {@link TaskLimits}. */
export const DEFAULT_TASK_LIMITS: Required<TaskLimits> = {
  maxTurns: 30,
  maxCallsPerTurn: 8,
  callTimeoutMs: 30_000,
  episodeTimeoutMs: 600_000,
};
