/**
 * The `envace` rehearse prompt profile: the simulator messages of EnvACE (commit 173e941) byte for
 * byte, as `tool_simulator_agent.py`'s `_build_prompt` assembles them from the payload of
 * `envs.py`'s `_build_info`, with `simulate_core/_builders.py` (`build_validation_user_prompt`,
 * `build_few_shot_examples_lines`, `serialize_conversation_history`) and the system prompt that
 * `simulate_core/_prompt_loader.py` loads. Shared vectors printed by EnvACE's own builders:
 * `test/fixtures/envace/rehearse-prompt.vectors.json`.
 */
import type { JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import { pythonJsonDumps } from '../base/pythonJsonDumps';
import { parseActOutput, TOOL_CALL_OPEN } from './actParser';
import type { ChatMessage, RecordedExample, ToolDefinition } from './types';
import { envaceToolSchema } from './envaceTools';
import {
  rstripPythonWhitespace,
  sanitizeTextForTokenizer,
  stripPythonWhitespace,
} from './pythonText';
import instruction from './envace/validationSystemInstruction.json';

/** What the envace profile takes of the rehearse prompt input (see `RehearsePromptInput`). */
export interface EnvacePromptInput {
  tools: readonly ToolDefinition[];
  examples?: readonly RecordedExample[];
  history?: readonly ChatMessage[];
  latestText?: string;
  call: { name: string; arguments: JsonValue };
}

/** EnvACE's `sim_inject_*` switches of the tool executor: each optional section on or off. */
export interface EnvacePromptSections {
  includeTools: boolean;
  includeHistory: boolean;
  includeLatestText: boolean;
}

/**
 * `VALIDATION_SIMULATOR_SYSTEM_INSTRUCTION`: EnvACE's prompt file (Apache-2.0, kept verbatim with
 * its source and notice in `envace/validationSystemInstruction.json`), `rstrip()`ped as the loader does.
 */
export const ENVACE_REHEARSE_SYSTEM_PROMPT: string = rstripPythonWhitespace(instruction.text);

const INDENT_0 = { indent: 0 } as const;
const FEW_SHOT_UNAVAILABLE = 'Previous tool calls and results (few-shot): <unavailable>';

/** The envace profile's chat messages (system + user) for one call. */
export function buildEnvacePrompt(
  input: EnvacePromptInput,
  sections: EnvacePromptSections,
): ChatMessage[] {
  // EnvACE's simulator sees the record's tools, which the dataset holds in verl's shape.
  const candidates = input.tools.map(envaceToolSchema);
  const called = candidates.find((t) => t.function.name === input.call.name);
  const parts: string[] = [];
  if (sections.includeTools && candidates.length > 0)
    parts.push(
      'Candidate tools (whitelist for this sample):\n' + pythonJsonDumps(candidates, INDENT_0),
    );
  parts.push(fewShotLines(input.examples ?? []).join('\n'));
  if (sections.includeHistory)
    parts.push('Current conversation history:\n' + serializeHistory(input.history ?? []));
  const latest = input.latestText === undefined ? '' : sanitizeTextForTokenizer(input.latestText);
  if (sections.includeLatestText && latest) parts.push("RL model's latest response:\n" + latest);
  parts.push(
    'Current tool to simulate:\n' +
      `- name: ${input.call.name}\n` +
      '- input schema (JSON Schema):\n' +
      (called ? pythonJsonDumps(called, INDENT_0) : '<schema unavailable>') +
      '\n' +
      "- arguments (JSON, parsed from caller's tool_call):\n" +
      pythonJsonDumps(input.call.arguments, INDENT_0),
  );
  // SIM_APPEND_THINK_SWITCH is on unless the environment turns it off.
  return [
    { role: 'system', content: ENVACE_REHEARSE_SYSTEM_PROMPT },
    { role: 'user', content: parts.join('\n\n') + '\n\n/think' },
  ];
}

/**
 * `build_few_shot_examples_lines`: every recorded call, grouped by tool in the order the tools
 * first appear; a result's text verbatim, else an object or array as `json.dumps(indent=0)`. Any
 * other result fails EnvACE's assertion, which turns the whole section into `<unavailable>`.
 */
function fewShotLines(examples: readonly RecordedExample[]): string[] {
  if (examples.length === 0) return [FEW_SHOT_UNAVAILABLE];
  const byTool = new Map<string, RecordedExample[]>();
  for (const e of examples) {
    const same = byTool.get(e.tool);
    if (same) same.push(e);
    else byTool.set(e.tool, [e]);
  }
  const lines = ['Previous tool calls and results (few-shot):'];
  for (const [tool, pairs] of byTool) {
    for (const e of pairs) {
      // EnvACE shows a dataset's tool message as written: the text a result was parsed from, if known.
      const text = e.text ?? (typeof e.result === 'string' ? e.result : undefined);
      if (text === undefined && !Array.isArray(e.result) && !isJsonObject(e.result))
        return [FEW_SHOT_UNAVAILABLE];
      const resultText =
        text !== undefined ? sanitizeTextForTokenizer(text) : pythonJsonDumps(e.result, INDENT_0);
      lines.push(
        `Tool name:\n${tool}\nTool arguments:\n${pythonJsonDumps(e.arguments, INDENT_0)}\nTool execution result:\n${resultText}\n`,
      );
    }
  }
  return lines;
}

/** `serialize_conversation_history` of the messages as EnvACE's environment holds them. */
function serializeHistory(history: readonly ChatMessage[]): string {
  const lines: string[] = [];
  for (const m of history) {
    if (m.role === 'user' && stripPythonWhitespace(m.content))
      lines.push(`User: ${stripPythonWhitespace(m.content)}`);
    if (m.role === 'tool') {
      const content = stripPythonWhitespace(sanitizeTextForTokenizer(m.content));
      if (content) lines.push(`${m.name ? `Tool[${m.name}]` : 'Tool'}: ${content}`);
    }
    if (m.role === 'assistant') {
      const text = assistantText(m);
      if (text) lines.push(`Assistant: ${text}`);
    }
  }
  return lines.length ? lines.join('\n\n') : 'No conversation history';
}

/**
 * An assistant message as `envs.py` stores a turn (its text up to the first tool-call block, the
 * calls with `json.dumps(arguments, ensure_ascii=False)`), rendered as the serializer writes it.
 */
function assistantText(m: ChatMessage): string {
  let content = sanitizeTextForTokenizer(m.content);
  let calls: { name: string; arguments: string }[];
  if (m.tool_calls?.length) {
    calls = m.tool_calls.map((c) => ({
      name: c.function.name,
      arguments:
        typeof c.function.arguments === 'string'
          ? c.function.arguments
          : pythonJsonDumps(c.function.arguments),
    }));
  } else {
    const parse = parseActOutput(content);
    calls =
      parse.kind === 'calls'
        ? parse.calls.map((c) => ({
            name: c.name,
            arguments: sanitizeTextForTokenizer(
              pythonJsonDumps(c.arguments, { ensureAscii: false }),
            ),
          }))
        : [];
    if (calls.length) content = content.slice(0, content.indexOf(TOOL_CALL_OPEN));
  }
  return (
    stripPythonWhitespace(content) +
    calls
      .map((c) => `\n<tool_call>\n{"name": "${c.name}", "arguments": ${c.arguments}}\n</tool_call>`)
      .join('')
  );
}
