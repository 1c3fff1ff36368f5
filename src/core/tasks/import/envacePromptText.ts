import { isJsonObject } from '../../base/json';
import type { ToolDefinition } from '../../protocol/types';
import { parseStrictJson } from '../../protocol/strictJson';

/*
 * A caller prompt in EnvACE's dump is its Qwen3 chat template rendering with the special tokens
 * (`<|im_start|>`, `<|im_end|>`) removed (`verl/trainer/ppo/ray_trainer.py:1422`), so a message
 * reads `<role>\n<content>\n`: the role boundaries are gone, and these readers look for the
 * template's fixed text instead. They return nothing rather than guess when it is not there.
 */

const TOOLS_OPEN = '<tools>\n';
const TOOLS_CLOSE = '\n</tools>';
/** The last line of the template's tools section, right before the first user message. */
const TOOLS_SECTION_END = '</tool_call>\nuser\n';
const USER_ROLE = '\nuser\n';
const SYSTEM_ROLE = 'system\n';

/** The generation prompt a caller prompt ends with: its last line (`assistant\n` for Qwen3), or '' when it has none. */
export function generationTail(prompt: string): string {
  const cut = prompt.lastIndexOf('\n', prompt.length - 2);
  const tail = cut < 0 ? '' : prompt.slice(cut + 1);
  return tail.endsWith('\n') && tail.trim() !== '' ? tail : '';
}

/** The tools of the template's `<tools>` section, one JSON object a line; `[]` when it has none. */
export function toolsInPrompt(prompt: string): ToolDefinition[] {
  const open = prompt.indexOf(TOOLS_OPEN);
  const close = open < 0 ? -1 : prompt.indexOf(TOOLS_CLOSE, open);
  if (close < 0) return [];
  const tools: ToolDefinition[] = [];
  for (const line of prompt.slice(open + TOOLS_OPEN.length, close).split('\n')) {
    const parsed = parseStrictJson(line);
    const fn =
      parsed.ok && isJsonObject(parsed.value)
        ? isJsonObject(parsed.value['function'])
          ? parsed.value['function']
          : parsed.value
        : undefined;
    if (!fn || typeof fn['name'] !== 'string' || fn['name'] === '') continue;
    tools.push({
      name: fn['name'],
      ...(typeof fn['description'] === 'string' ? { description: fn['description'] } : {}),
      parameters: fn['parameters'] ?? { type: 'object' },
    });
  }
  return tools;
}

/** A first-turn prompt split into its system message (tools section included) and its first user message. */
export interface FirstPrompt {
  system?: string;
  instruction?: string;
}

/**
 * Splits a first-turn prompt at its first user message: after the tools section when there is one,
 * else at the first `user` role line; the generation prompt is left out. Without either, the whole
 * prompt is the system text, so that nothing the policy saw is lost.
 */
export function splitFirstPrompt(prompt: string, generationTail: string): FirstPrompt {
  const afterTools = prompt.indexOf(TOOLS_SECTION_END);
  const start = afterTools >= 0 ? afterTools + TOOLS_SECTION_END.length : userStart(prompt, 0);
  if (
    start < 0 ||
    generationTail === '' ||
    !prompt.endsWith(generationTail) ||
    start > prompt.length - generationTail.length
  )
    return { system: prompt };
  const head = prompt.slice(0, start - USER_ROLE.length);
  const system = head.startsWith(SYSTEM_ROLE) ? head.slice(SYSTEM_ROLE.length) : head;
  return {
    ...(system.trim() !== '' ? { system } : {}),
    instruction: trimNewline(prompt.slice(start, prompt.length - generationTail.length)),
  };
}

/** The user message rendered after a final answer: what follows the answer, minus the generation prompt. */
export function userAfterAnswer(
  continuation: string,
  answer: string,
  generationTail: string,
): string | undefined {
  const at = answer.trim() === '' ? -1 : continuation.indexOf(answer.trim());
  const start = userStart(continuation, at < 0 ? 0 : at + answer.trim().length);
  if (start < 0 || !continuation.endsWith(generationTail)) return undefined;
  return trimNewline(continuation.slice(start, continuation.length - generationTail.length));
}

function userStart(text: string, from: number): number {
  const at = text.indexOf(USER_ROLE, from);
  return at < 0 ? -1 : at + USER_ROLE.length;
}

function trimNewline(s: string): string {
  return s.endsWith('\n') ? s.slice(0, -1) : s;
}
