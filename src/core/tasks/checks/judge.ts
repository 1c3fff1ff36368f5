import OpenAI from 'openai';
import { errorMessage } from '../../base/errors';
import { parseStrictJson } from '../../protocol/strictJson';
import { isJsonObject } from '../../base/json';
import { canonicalJson } from '../../base/canonicalJson';
import type { JudgeCheck } from '../format/taskFile';
import type { ItemResult } from './ruleChecks';
import type { EpisodeTranscript } from './transcript';

/** Evaluates judge items. Without one, judge items are reported as not evaluated. */
export interface Judge {
  evaluate(item: JudgeCheck, transcript: EpisodeTranscript): Promise<ItemResult>;
  /**
   * The OpenAI-compatible endpoint it asks, where it is one: a benchmark's own evaluator that asks a
   * judge itself (τ²'s natural-language assertions) is pointed there.
   */
  readonly endpoint?: JudgeEndpoint;
}

/** An OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp server, OpenAI) used as judge. */
export interface JudgeEndpoint {
  /** Base URL of the API, e.g. `http://127.0.0.1:8000/v1`. */
  baseURL: string;
  model: string;
  apiKey?: string;
  /** Limit of one verdict (default 60 s). */
  timeoutMs?: number;
}

const VERDICT_SCHEMA = {
  type: 'object',
  properties: { reasoning: { type: 'string' }, answer: { type: 'boolean' } },
  required: ['reasoning', 'answer'],
  additionalProperties: false,
} as const;

/** The conversation as a judge reads it: user turns, tool calls with their results, answers. */
export function transcriptText(transcript: EpisodeTranscript, turn?: number): string {
  const lines: string[] = [];
  transcript.turns.forEach((t, i) => {
    if (turn !== undefined && i !== turn) return;
    lines.push(`# Turn ${i}`, `User: ${t.user}`);
    for (const c of t.calls) {
      lines.push(`Assistant calls ${c.name} ${canonicalJson(c.arguments)}`);
      const o = c.outcome;
      if (o?.error) lines.push(`Tool error ${o.error.code}: ${o.error.message}`);
      else if (o?.response)
        lines.push(
          `Tool result: ${o.response.structured !== undefined ? canonicalJson(o.response.structured) : (o.response.text ?? []).join('\n')}`,
        );
    }
    lines.push(`Assistant: ${t.answer ?? '(no final answer)'}`);
  });
  return lines.join('\n');
}

/** The judge prompt for one item (criteria in EnvACE's checklist fields). */
export function judgePrompt(item: JudgeCheck, transcript: EpisodeTranscript): string {
  return [
    'You are a precise checklist evaluator. Judge whether the conversation between a user, an assistant and its tools satisfies the criterion below.',
    '',
    `Question: ${item.question}`,
    ...(item.focus_on ? [`Focus on: ${item.focus_on}`] : []),
    ...(item.pass_condition ? [`Pass condition: ${item.pass_condition}`] : []),
    ...(item.failure_examples?.length
      ? [`Failure examples: ${JSON.stringify(item.failure_examples)}`]
      : []),
    ...(item.evidence?.length ? [`Reference snippets: ${JSON.stringify(item.evidence)}`] : []),
    '',
    'Conversation:',
    transcriptText(transcript, item.turn),
    '',
    'Answer with one JSON object {"reasoning": string, "answer": boolean}: answer is true only if the pass condition is fully met and no failure example applies.',
  ].join('\n');
}

/**
 * A judge that asks an OpenAI-compatible endpoint. A failed request or an unreadable verdict is
 * `passed: null` (not evaluated) with the reason, never a pass or a fail.
 */
export class EndpointJudge implements Judge {
  private readonly client: OpenAI;

  constructor(readonly endpoint: JudgeEndpoint) {
    this.client = new OpenAI({
      baseURL: endpoint.baseURL,
      apiKey: endpoint.apiKey ?? 'none',
      timeout: endpoint.timeoutMs ?? 60_000,
      maxRetries: 1,
    });
  }

  async evaluate(item: JudgeCheck, transcript: EpisodeTranscript): Promise<ItemResult> {
    let content: string;
    try {
      const completion = await this.client.chat.completions.create({
        model: this.endpoint.model,
        temperature: 0,
        messages: [{ role: 'user', content: judgePrompt(item, transcript) }],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'verdict', strict: true, schema: VERDICT_SCHEMA },
        },
      });
      content = completion.choices[0]?.message?.content ?? '';
    } catch (err) {
      return {
        passed: null,
        detail: `not evaluated: the judge at ${this.endpoint.baseURL} failed (${errorMessage(err)})`,
      };
    }
    const parsed = parseStrictJson(content.trim());
    if (!parsed.ok || !isJsonObject(parsed.value) || typeof parsed.value['answer'] !== 'boolean') {
      return {
        passed: null,
        detail: `not evaluated: the judge's verdict is not {"answer": boolean} (${content.slice(0, 120)})`,
      };
    }
    const reasoning =
      typeof parsed.value['reasoning'] === 'string' ? parsed.value['reasoning'] : '';
    return { passed: parsed.value['answer'], detail: `judge: ${reasoning.slice(0, 300)}` };
  }
}
