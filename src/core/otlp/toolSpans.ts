import { canonicalJson } from '../base/canonicalJson';
import type { JsonValue } from '../base/json';
import { jsonAttribute, MessageNotJson, valueText } from './genaiMessages';
import type { OtlpCall, OtlpEpisode } from './episodeTypes';
import type { OtlpSpan } from './otlpJson';
import { isVercelAiToolCall, vercelAiToolCall } from './vercelAi';

/** What an `execute_tool` span says of its call. */
interface ToolSpan {
  spanId: string;
  id?: string;
  name: string;
  arguments?: JsonValue;
  result?: string;
  failed: boolean;
  /** The failure's own words: its exception event's message, else the span status's. */
  errorMessage?: string;
  /** Whether the span recorded the exception itself. */
  exceptionMessage: boolean;
}

/**
 * True for a span of one tool call: `execute_tool` by operation or by name, OpenInference's TOOL,
 * or the Vercel AI SDK's `ai.toolCall`.
 */
function isToolSpan(span: OtlpSpan): boolean {
  const op = span.attributes['gen_ai.operation.name'];
  return (
    op === 'execute_tool' ||
    (op === undefined && span.name.startsWith('execute_tool')) ||
    isOpenInferenceTool(span) ||
    isVercelAiToolCall(span)
  );
}

function isOpenInferenceTool(span: OtlpSpan): boolean {
  return span.attributes['openinference.span.kind'] === 'TOOL';
}

function toolSpan(span: OtlpSpan): ToolSpan {
  const a = span.attributes;
  // OpenInference and the Vercel AI SDK name the same things their own way.
  const oi = isOpenInferenceTool(span);
  const vercel = isVercelAiToolCall(span) ? vercelAiToolCall(span) : undefined;
  const named = a['gen_ai.tool.name'] ?? (oi ? a['tool.name'] : vercel?.name);
  const name = typeof named === 'string' ? named : span.name.replace(/^execute_tool\s*/, '');
  const exception = span.events.find((e) => e.name === 'exception');
  const exceptionMessage = exception?.attributes['exception.message'];
  let args: JsonValue | undefined;
  try {
    args = jsonAttribute(
      a['gen_ai.tool.call.arguments'] ?? (oi ? a['input.value'] : vercel?.arguments),
      'arguments',
    );
  } catch (err) {
    if (!(err instanceof MessageNotJson)) throw err;
  }
  const result = a['gen_ai.tool.call.result'] ?? (oi ? a['output.value'] : vercel?.result);
  const errorMessage =
    typeof exceptionMessage === 'string' ? exceptionMessage : span.status.message;
  const id = a['gen_ai.tool.call.id'] ?? a['tool_call.id'] ?? vercel?.id;
  return {
    spanId: span.spanId,
    ...(typeof id === 'string' && id ? { id } : {}),
    name,
    ...(args !== undefined ? { arguments: args } : {}),
    ...(result !== undefined ? { result: valueText(result) } : {}),
    failed: span.status.code === 2 || a['error.type'] !== undefined,
    exceptionMessage: typeof exceptionMessage === 'string',
    ...(errorMessage ? { errorMessage } : {}),
  };
}

/**
 * Joins the trace's tool spans to the episode's calls: by call id, else (a span without one) by
 * tool name and arguments, else (a span without arguments either) by name, in order. A joined span
 * gives its call the error flag, the id the conversation lacked, and its own result where the
 * conversation shows none or generic text in its place; calls no span joins keep what the
 * conversation says. What could not be
 * recovered is noted on the episode.
 */
export function recoverFromToolSpans(
  episode: OtlpEpisode,
  unanswered: readonly OtlpCall[],
  spans: readonly OtlpSpan[],
): void {
  const tools = spans
    .filter(isToolSpan)
    .sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0))
    .map(toolSpan);
  const calls = episode.turns.flatMap((t) => t.calls);
  const joined = new Map<OtlpCall, ToolSpan>();
  const free = (c: OtlpCall) => !joined.has(c);
  const join = (span: ToolSpan, find: (c: OtlpCall) => boolean, how?: string) => {
    const call = calls.find((c) => free(c) && c.name === span.name && find(c));
    if (!call) return false;
    joined.set(call, span);
    if (how)
      episode.notes.push(
        `tool span ${span.spanId} (${span.name}) has no call id; joined to call ${call.id ?? '(no id)'} ${how}`,
      );
    return true;
  };
  const rest = tools.filter((s) => !(s.id && join(s, (c) => c.id === s.id)));
  const unjoined = rest.filter(
    (s) =>
      !join(
        s,
        (c) =>
          s.arguments !== undefined && canonicalJson(c.arguments) === canonicalJson(s.arguments),
        'by name and arguments',
      ) &&
      // A span whose arguments match no call is not another call's: only one without them joins by name.
      !(s.arguments === undefined && join(s, () => true, 'by name, in order')),
  );
  for (const s of unjoined)
    episode.notes.push(
      `tool span ${s.spanId} (${s.name}) matches no call of the conversation; not read`,
    );
  const waiting = new Set(unanswered);
  for (const [call, span] of joined) applySpan(episode, call, span, waiting.has(call));
  const missing = calls.filter(free);
  if (missing.length)
    episode.notes.push(
      tools.length
        ? `${missing.map((c) => c.id ?? c.name).join(', ')}: no tool span; error flag not recorded`
        : 'no tool span in the trace: error flags not recorded, results as the conversation shows them',
    );
}

function applySpan(episode: OtlpEpisode, call: OtlpCall, span: ToolSpan, unanswered: boolean) {
  const label = `${call.name} (${call.id ?? span.id ?? span.spanId})`;
  if (!call.id && span.id) {
    call.id = span.id;
    episode.notes.push(`${label}: call id taken from its tool span`);
  }
  call.isError = span.failed;
  if (
    span.failed &&
    !span.exceptionMessage &&
    !(span.result ?? call.result ?? '').includes(span.errorMessage ?? '\0')
  )
    episode.notes.push(
      `${label}: failed, but the trace holds no more of the error than its result${span.errorMessage ? ` and the span status ${JSON.stringify(clip(span.errorMessage))}` : ''}`,
    );
  if (span.result !== undefined) {
    if (!unanswered && call.result !== span.result && span.failed)
      episode.notes.push(
        `${label}: the conversation shows ${JSON.stringify(clip(call.result ?? ''))}; the tool span's result is kept`,
      );
    call.result = span.result;
  } else if (span.failed && span.errorMessage !== undefined) {
    // A producer that shows the model generic text for a failure: the span holds the tool's words.
    if (unanswered) {
      call.result = span.errorMessage;
      episode.notes.push(
        `${label}: no answer in the conversation; the span's error message is kept`,
      );
    } else if (!(call.result ?? '').includes(span.errorMessage)) {
      episode.notes.push(
        `${label}: the conversation shows ${JSON.stringify(clip(call.result ?? ''))}; the span's error message is kept`,
      );
      call.result = span.errorMessage;
    }
  }
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
