import type { JsonObject, JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import { parseActOutput } from '../protocol/actParser';
import type { ToolDefinition } from '../protocol/types';
import type { OtlpCall, OtlpEpisode } from './episodeTypes';
import { parseTools, RecordError } from '../tasks/import/conversation';
import type { OtlpFault, OtlpFaultCode } from './codes';
import type { ConversationMessage } from './genaiMessages';
import {
  currentMessages,
  eventMessages,
  isMessageEvent,
  jsonAttribute,
  MessageNotJson,
} from './genaiMessages';
import { openInferenceMessages } from './openInference';
import type { OtlpSpan } from './otlpJson';
import type { OtlpTrace } from './otlpTraces';
import { recoverFromToolSpans } from './toolSpans';
import { vercelAiMessages, vercelAiTools } from './vercelAi';

/** A trace that gives no episode, with its code. */
class EpisodeFault extends Error {
  constructor(
    readonly code: OtlpFaultCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Rebuilds the conversation of one trace: the longest message list any span holds (a chat span's
 * input and output messages in either convention, or an agent span's whole history), then each
 * call's answer, id and error flag recovered from the `execute_tool` spans. Returns a fault when the
 * trace holds no conversation that can be replayed; a span's messages that are not JSON are a
 * fault pushed to `faults`, and the other spans are read.
 */
export function episodeOfTrace(trace: OtlpTrace, faults: OtlpFault[]): OtlpEpisode | OtlpFault {
  const where = { file: trace.file, line: trace.line, traceId: trace.traceId };
  try {
    const notes: string[] = [];
    const { messages, span } = conversationOf(trace, faults);
    const service = span?.service ?? trace.spans.find((s) => s.service)?.service;
    if (!messages.some((m) => m.role === 'user'))
      throw new EpisodeFault(
        'OTLP_NO_CONVERSATION',
        `trace ${trace.traceId} holds no GenAI messages with a user message (is message content captured?)`,
      );
    const episode: OtlpEpisode = {
      traceId: trace.traceId,
      ...(service ? { service } : {}),
      file: span?.file ?? trace.file,
      line: span?.line ?? trace.line,
      tools: toolsOf(trace.spans, notes),
      turns: [],
      notes,
    };
    const unanswered = turnsOf(messages, episode);
    recoverFromToolSpans(episode, unanswered, trace.spans);
    for (const t of episode.turns)
      for (const c of t.calls)
        if (c.result === undefined)
          throw new EpisodeFault(
            'OTLP_CONVERSATION_INVALID',
            `call ${c.id ?? c.name} of trace ${trace.traceId} has no answer, in the messages or a tool span`,
          );
    const last = episode.turns.at(-1);
    if (last && !last.calls.length && !last.parseError) episode.answer = last.text.trim();
    if (!episode.turns.some((t) => t.calls.length))
      throw new EpisodeFault(
        'OTLP_CONVERSATION_INVALID',
        `trace ${trace.traceId} has no tool call, so there is nothing to replay`,
      );
    return episode;
  } catch (err) {
    if (err instanceof EpisodeFault) return { code: err.code, ...where, message: err.message };
    if (err instanceof MessageNotJson || err instanceof RecordError)
      return {
        code: err instanceof MessageNotJson ? 'OTLP_MESSAGE_NOT_JSON' : 'OTLP_CONVERSATION_INVALID',
        ...where,
        message: `trace ${trace.traceId}: ${err.message}`,
      };
    throw err;
  }
}

/** The longest conversation a span of the trace holds; ties go to the span that ended last. */
function conversationOf(
  trace: OtlpTrace,
  faults: OtlpFault[],
): { messages: ConversationMessage[]; span?: OtlpSpan } {
  let best: { messages: ConversationMessage[]; span?: OtlpSpan; end: bigint } = {
    messages: [],
    end: -1n,
  };
  const consider = (messages: ConversationMessage[], span: OtlpSpan | undefined) => {
    const end = span?.endNs ?? 0n;
    if (
      messages.length > best.messages.length ||
      (messages.length === best.messages.length && messages.length > 0 && end > best.end)
    )
      best = { messages, span, end };
  };
  const bySpan = new Map(trace.spans.map((s) => [s.spanId, s]));
  const notJson = (err: MessageNotJson, spanId: string) =>
    faults.push({
      code: 'OTLP_MESSAGE_NOT_JSON',
      file: bySpan.get(spanId)?.file ?? trace.file,
      line: bySpan.get(spanId)?.line ?? trace.line,
      traceId: trace.traceId,
      spanId,
      message: `span ${spanId}: ${err.message}; its messages are not read`,
    });
  for (const span of trace.spans) {
    const a = span.attributes;
    try {
      const system = currentMessages(a['gen_ai.system_instructions'], 'gen_ai.system_instructions');
      const input = currentMessages(a['gen_ai.input.messages'], 'gen_ai.input.messages');
      const output = currentMessages(a['gen_ai.output.messages'], 'gen_ai.output.messages');
      const systemText = system.map((m) => m.text).join('\n');
      consider(
        [
          ...(systemText ? [{ role: 'system' as const, text: systemText }] : []),
          ...input,
          ...output,
        ],
        span,
      );
      consider(currentMessages(a['pydantic_ai.all_messages'], 'pydantic_ai.all_messages'), span);
      consider(
        [
          ...openInferenceMessages(a, 'llm.input_messages'),
          ...openInferenceMessages(a, 'llm.output_messages'),
        ],
        span,
      );
      consider(vercelAiMessages(a), span);
    } catch (err) {
      if (!(err instanceof MessageNotJson)) throw err;
      notJson(err, span.spanId);
    }
  }
  for (const [spanId, events] of trace.events) {
    if (!events.some(isMessageEvent)) continue;
    try {
      consider(eventMessages(events), bySpan.get(spanId));
    } catch (err) {
      if (!(err instanceof MessageNotJson)) throw err;
      notJson(err, spanId);
    }
  }
  return best;
}

/**
 * Tool definitions from `gen_ai.tool.definitions` (or the Vercel AI SDK's `ai.prompt.tools`) on any
 * span (the first that has them), else from OpenInference's tool spans (`tool.name`,
 * `tool.description`, `tool.parameters`).
 */
function toolsOf(spans: readonly OtlpSpan[], notes: string[]): ToolDefinition[] {
  const described = spans.flatMap((s) => {
    const a = s.attributes;
    if (a['openinference.span.kind'] !== 'TOOL' || typeof a['tool.name'] !== 'string') return [];
    return [
      {
        name: a['tool.name'],
        ...(typeof a['tool.description'] === 'string'
          ? { description: a['tool.description'] }
          : {}),
        parameters: schemaOf(a['tool.parameters']),
      },
    ];
  });
  for (const span of spans) {
    const key =
      span.attributes['gen_ai.tool.definitions'] !== undefined
        ? 'gen_ai.tool.definitions'
        : 'ai.prompt.tools';
    try {
      const raw =
        key === 'ai.prompt.tools'
          ? vercelAiTools(span.attributes)
          : span.attributes['gen_ai.tool.definitions'];
      if (raw === undefined) continue;
      return parseTools(raw);
    } catch (err) {
      if (!(err instanceof RecordError) && !(err instanceof MessageNotJson)) throw err;
      notes.push(`span ${span.spanId}: ${key}: ${err.message}; not read`);
    }
  }
  const byName = new Map(described.map((t) => [t.name, t]));
  try {
    return parseTools([...byName.values()]);
  } catch (err) {
    if (!(err instanceof RecordError)) throw err;
    notes.push(`tool spans: ${err.message}; their definitions are not read`);
    return [];
  }
}

/** A tool's parameter schema as written (JSON text or structure); an open schema when it is not JSON. */
function schemaOf(v: JsonValue | undefined): JsonValue {
  try {
    return jsonAttribute(v, 'tool.parameters') ?? { type: 'object', properties: {} };
  } catch (err) {
    if (!(err instanceof MessageNotJson)) throw err;
    return { type: 'object', properties: {} };
  }
}

function callArguments(v: JsonValue, name: string): JsonObject {
  const parsed = jsonAttribute(
    typeof v === 'string' && v.trim() === '' ? '{}' : v,
    `the arguments of ${name}`,
  );
  if (!isJsonObject(parsed ?? null))
    throw new MessageNotJson(`the arguments of ${name} are not a JSON object`);
  return parsed as JsonObject;
}

/**
 * Fills the episode's turns from the messages: each assistant message a turn, each tool message
 * the answer of its call (by id, else the first unanswered one). Returns the calls no message answered.
 */
function turnsOf(messages: readonly ConversationMessage[], episode: OtlpEpisode): OtlpCall[] {
  let user: string | undefined;
  const pending: OtlpCall[] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      if (!episode.turns.length && !user) episode.system = m.text;
    } else if (m.role === 'user') user = m.text;
    else if (m.role === 'assistant') {
      const calls = m.calls.map((c) => ({
        ...(c.id ? { id: c.id } : {}),
        name: c.name,
        arguments: callArguments(c.arguments, c.name),
      })) as OtlpCall[];
      const act = calls.length ? undefined : parseActOutput(m.text);
      episode.turns.push({
        ...(user !== undefined ? { user } : {}),
        text: m.text,
        calls,
        ...(act?.kind === 'error' ? { parseError: act.error } : {}),
      });
      pending.push(...calls);
      user = undefined;
    } else if (m.role === 'tool') {
      const at = m.callId ? pending.findIndex((c) => c.id === m.callId) : 0;
      const call = pending.splice(at < 0 ? 0 : at, 1)[0];
      if (!call) throw new RecordError('a tool answer follows no tool call');
      call.result = m.text;
    }
  }
  return pending;
}
