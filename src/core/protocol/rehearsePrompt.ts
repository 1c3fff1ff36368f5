import { canonicalJson } from '../base/canonicalJson';
import type { JsonValue } from '../base/json';
import type { ParsedToolCall } from './actParser';
import { formatToolCalls } from './actParser';
import { buildEnvacePrompt } from './envacePrompt';
import type { ChatMessage, RecordedExample, ToolDefinition } from './types';

/** What the rehearse role sees of one call. */
export interface RehearsePromptInput {
  /** The candidate tools of the task. */
  tools: readonly ToolDefinition[];
  /** Recorded calls with their real results (few-shot). */
  examples?: readonly RecordedExample[];
  /** The conversation so far, as the acting policy saw it. */
  history?: readonly ChatMessage[];
  /** The policy's latest raw text (the turn that made the call). */
  latestText?: string;
  /** The call to rehearse. */
  call: ParsedToolCall;
}

/** Which sections the rehearse prompt carries; recorded with every run so that training and evaluation agree. */
export interface RehearsePromptOptions {
  /**
   * Which prompt: `general` (the default, for any model: full instructions, tools, examples, history,
   * the latest text, the call with its schema) or `compact`, for small models trained on it: a
   * one-sentence system prompt and only the recent conversation (600 bytes) and the call, without
   * its schema (a 2.75M policy's rehearse rows: about half the tokens; with `maxExamples`, the
   * task's examples, when it has any), or `envace`: EnvACE's own
   * simulator prompt byte for byte (`envacePrompt.ts`; every recorded example and the whole
   * history, and of the options only includeTools, includeHistory and includeLatestText, EnvACE's
   * switches). A model folder's `rehearsal_config.json` names it, so the policy host and the rows
   * it is trained on agree. The other options override the profile's defaults.
   */
  profile?: RehearsePromptProfile;
  /** Include the list of candidate tools with their schemas (default true). */
  includeTools?: boolean;
  /**
   * At most this many recorded examples, the most relevant first (default 8; 0 drops the section).
   * The compact profile shows the section only when the task has examples.
   */
  maxExamples?: number;
  /** Include the conversation so far (default true). */
  includeHistory?: boolean;
  /** Budget of the history section in UTF-8 bytes; the oldest messages are dropped first (default 8000). */
  maxHistoryBytes?: number;
  /** Include the policy's latest raw text (default true). */
  includeLatestText?: boolean;
  /** Include the called tool's input schema in the call section (default true; compact: false). */
  includeSchema?: boolean;
}

/** The rehearse prompt profiles (see {@link RehearsePromptOptions.profile}). */
export const REHEARSE_PROMPT_PROFILES = ['general', 'compact', 'envace'] as const;
/** A rehearse prompt profile. */
export type RehearsePromptProfile = (typeof REHEARSE_PROMPT_PROFILES)[number];

type Sections = Required<Omit<RehearsePromptOptions, 'profile'>>;

/** The defaults of {@link RehearsePromptOptions} (the general profile). */
export const DEFAULT_REHEARSE_PROMPT_OPTIONS: Sections = {
  includeTools: true,
  maxExamples: 8,
  includeHistory: true,
  maxHistoryBytes: 8000,
  includeLatestText: true,
  includeSchema: true,
};

const PROFILE_DEFAULTS: Record<RehearsePromptProfile, Sections> = {
  general: DEFAULT_REHEARSE_PROMPT_OPTIONS,
  compact: {
    includeTools: false,
    maxExamples: 0,
    includeHistory: true,
    maxHistoryBytes: 600,
    includeLatestText: false,
    includeSchema: false,
  },
  // EnvACE has no limits and always shows the schema: the numbers and includeSchema do not apply.
  envace: DEFAULT_REHEARSE_PROMPT_OPTIONS,
};

/** The options EnvACE's prompt has switches for; the others are refused with the envace profile. */
const ENVACE_OPTIONS: readonly string[] = [
  'profile',
  'includeTools',
  'includeHistory',
  'includeLatestText',
];

/** The system prompt of the compact profile: what to answer and in which form, in one sentence. */
export const COMPACT_REHEARSE_SYSTEM_PROMPT =
  'You simulate tools: answer with exactly what the real tool returns for the call, as JSON between <execution_result> and </execution_result>.';

/** The system prompt of the rehearse role. */
export const REHEARSE_SYSTEM_PROMPT = [
  'You are a precise tool simulator. You play the environment of an agent: given the tools it may call, recorded calls with their real results, the conversation so far and one call, you predict exactly what the real tool returns for that call.',
  '',
  'Check the call first:',
  '1. The tool must be one of the candidate tools. If it is not, the result is {"error": "unknown tool: <name>"}.',
  '2. The arguments must satisfy the tool\'s input schema (required fields, types, enums). If they do not, the result is {"error": "<what is wrong>"}.',
  "3. Otherwise predict the real result: reuse a recorded result for the same call, and stay consistent with the conversation and the state it implies. A call the tool would refuse gets the tool's own error.",
  '',
  'Answer with an optional <think>...</think> block, then the result between execution_result tags and nothing after it. The result is JSON: a non-empty object or an array.',
  '<execution_result>',
  '{"key": "value"}',
  '</execution_result>',
].join('\n');

/**
 * Builds the rehearse role's chat messages (system + user) for one call. Every JSON value is
 * written in canonical form so that the Python trainer renders the same bytes
 * (`test/vectors/protocol/rehearse-prompt.json`).
 */
export function buildRehearsePrompt(
  input: RehearsePromptInput,
  options: RehearsePromptOptions = {},
): ChatMessage[] {
  const o = withDefaults(options);
  const profile = options.profile ?? 'general';
  if (profile === 'envace') return buildEnvacePrompt(input, o);
  const sections: string[] = [];
  if (o.includeTools) sections.push(toolsSection(input.tools));
  const examples = selectExamples(input.examples ?? [], input.call.name, o.maxExamples);
  // The compact profile has no section for examples a task does not have, so turning them on
  // changes nothing for such a task: its prompt stays byte for byte the one it was trained on.
  if (o.maxExamples > 0 && (examples.length > 0 || profile !== 'compact'))
    sections.push(examplesSection(examples));
  if (o.includeHistory) sections.push(historySection(input.history ?? [], o.maxHistoryBytes));
  if (o.includeLatestText && input.latestText !== undefined)
    sections.push("The agent's latest output:\n" + input.latestText);
  sections.push(callSection(input.call, input.tools, o.includeSchema));
  return [
    {
      role: 'system',
      content: profile === 'compact' ? COMPACT_REHEARSE_SYSTEM_PROMPT : REHEARSE_SYSTEM_PROMPT,
    },
    { role: 'user', content: sections.join('\n\n') },
  ];
}

// An option given as undefined (a setting left unset) takes its default; a plain spread would
// let it override the default and silently drop the section.
function withDefaults(options: RehearsePromptOptions): Sections {
  const o = { ...PROFILE_DEFAULTS[options.profile ?? 'general'] };
  for (const key of Object.keys(o) as (keyof Sections)[]) {
    if (options[key] !== undefined) Object.assign(o, { [key]: options[key] });
  }
  return o;
}

function toolsSection(tools: readonly ToolDefinition[]): string {
  if (tools.length === 0) return 'Candidate tools: none';
  const lines = tools.map((t) =>
    canonicalJson({ name: t.name, description: t.description ?? '', parameters: t.parameters }),
  );
  return 'Candidate tools:\n' + lines.join('\n');
}

/** Examples of the called tool first (in recorded order), then the others, up to `max`. */
export function selectExamples(
  examples: readonly RecordedExample[],
  tool: string,
  max: number,
): RecordedExample[] {
  const same = examples.filter((e) => e.tool === tool);
  const other = examples.filter((e) => e.tool !== tool);
  return [...same, ...other].slice(0, max);
}

function examplesSection(examples: readonly RecordedExample[]): string {
  if (examples.length === 0) return 'Recorded calls with their real results: none';
  const blocks = examples.map(
    (e) =>
      `Tool: ${e.tool}\nArguments: ${canonicalJson(e.arguments)}\nResult: ${resultText(e.result)}`,
  );
  return 'Recorded calls with their real results:\n' + blocks.join('\n\n');
}

function resultText(v: JsonValue): string {
  return typeof v === 'string' ? v : canonicalJson(v);
}

/** One history message as one line block, the form the rehearse prompt shows. */
export function historyLine(m: ChatMessage): string | undefined {
  switch (m.role) {
    case 'system':
      return undefined; // the agent's instructions are not the environment's business
    case 'user':
      return m.content ? `User: ${m.content}` : undefined;
    case 'assistant': {
      const calls = (m.tool_calls ?? []).map((c) => ({
        name: c.function.name,
        arguments: c.function.arguments,
      }));
      const text = m.content + formatToolCalls(calls);
      return text ? `Assistant: ${text}` : undefined;
    }
    case 'tool':
      return `Tool[${m.name ?? ''}]: ${m.content}`;
  }
}

function historySection(history: readonly ChatMessage[], maxBytes: number): string {
  const lines = history.map(historyLine).filter((l): l is string => l !== undefined);
  // Keep the newest messages that fit the budget; the oldest go first.
  let used = 0;
  let first = lines.length;
  while (first > 0) {
    const size = Buffer.byteLength(lines[first - 1], 'utf8') + 2;
    if (used + size > maxBytes) break;
    used += size;
    first--;
  }
  const kept = lines.slice(first);
  if (kept.length === 0)
    return lines.length
      ? 'Conversation so far: (omitted, too long)'
      : 'Conversation so far: (empty)';
  const head =
    first > 0 ? `Conversation so far (${first} earlier messages omitted):` : 'Conversation so far:';
  return head + '\n' + kept.join('\n\n');
}

function callSection(
  call: ParsedToolCall,
  tools: readonly ToolDefinition[],
  includeSchema: boolean,
): string {
  if (!includeSchema)
    return `Call to simulate:\nTool: ${call.name}\nArguments: ${canonicalJson(call.arguments)}`;
  const tool = tools.find((t) => t.name === call.name);
  const schema = tool ? canonicalJson(tool.parameters) : '(not a candidate tool)';
  return `Call to simulate:\nTool: ${call.name}\nInput schema: ${schema}\nArguments: ${canonicalJson(call.arguments)}`;
}

/**
 * Rehearse prompt options from outside (a model folder's rehearsal_config.json, `--rehearse-prompt`):
 * the options, or a message that says which field is wrong and what it takes.
 */
export function parseRehearsePromptOptions(
  value: unknown,
): { ok: true; options: RehearsePromptOptions } | { ok: false; message: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, message: 'rehearsePrompt must be a JSON object' };
  const v = value as Record<string, unknown>;
  const known = ['profile', ...Object.keys(DEFAULT_REHEARSE_PROMPT_OPTIONS)];
  for (const [key, x] of Object.entries(v)) {
    if (!known.includes(key))
      return {
        ok: false,
        message: `rehearsePrompt.${key} is not an option (options: ${known.join(', ')})`,
      };
    if (v['profile'] === 'envace' && !ENVACE_OPTIONS.includes(key))
      return {
        ok: false,
        message: `rehearsePrompt.${key} does not apply to the envace profile, which reproduces EnvACE's prompt (options: ${ENVACE_OPTIONS.join(', ')})`,
      };
    if (key === 'profile') {
      if (!REHEARSE_PROMPT_PROFILES.includes(x as RehearsePromptProfile))
        return {
          ok: false,
          message: `rehearsePrompt.profile must be ${REHEARSE_PROMPT_PROFILES.slice(0, -1).join(', ')} or ${REHEARSE_PROMPT_PROFILES[REHEARSE_PROMPT_PROFILES.length - 1]}, not ${JSON.stringify(x)}`,
        };
    } else if (key === 'maxExamples' || key === 'maxHistoryBytes') {
      if (!Number.isInteger(x) || (x as number) < 0 || (x as number) > 1_000_000)
        return {
          ok: false,
          message: `rehearsePrompt.${key} must be a whole number from 0 to 1000000, not ${JSON.stringify(x)}`,
        };
    } else if (typeof x !== 'boolean')
      return {
        ok: false,
        message: `rehearsePrompt.${key} must be true or false, not ${JSON.stringify(x)}`,
      };
  }
  return { ok: true, options: v as RehearsePromptOptions };
}
