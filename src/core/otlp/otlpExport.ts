import { createHash } from 'node:crypto';
import { canonicalJson } from '../base/canonicalJson';
import type { JsonObject, JsonValue } from '../base/json';
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from '../protocol/actParser';
import { removeBlocks } from '../protocol/text';
import { actualEventToolText } from '../runner/toolMessages';
import type {
  CallActualEvent,
  CallRehearsalEvent,
  EpisodeEndEvent,
  EpisodeEvent,
  FidelityEvent,
  RunEvent,
  TraceEvent,
  TurnEvent,
} from '../trace/format/schema';

/** The instrumentation scope and service the exported spans name. */
export const OTLP_EXPORT_SCOPE = 'rehearsal-studio';

/** OTLP's span kinds, as OTLP JSON writes them (integers). */
const SPAN_KIND = { internal: 1, client: 3 } as const;

/** One episode's events, gathered from a run's trace. */
interface EpisodeEvents {
  episode: EpisodeEvent;
  turns: TurnEvent[];
  rehearsals: Map<string, CallRehearsalEvent>;
  actuals: Map<string, CallActualEvent>;
  fidelity: Map<string, FidelityEvent>;
  end?: EpisodeEndEvent;
}

/**
 * A studio run as OTLP JSON, one ExportTraceServiceRequest per line, one OTLP trace per episode,
 * in the GenAI conventions (current form): an `invoke_agent` span; a `chat` span per turn with
 * `gen_ai.input.messages` (the conversation before it) and `gen_ai.output.messages` (the turn); an
 * `execute_tool` span per call with its arguments, its actual result (`gen_ai.tool.call.result`,
 * error status when the tool failed) and its rehearsed result (`studio.rehearsal.result`), and each
 * fidelity score as a `gen_ai.evaluation.result` event of that span. Ids are derived from the run,
 * episode and call ids, so the same run exports the same bytes.
 */
export function runAsOtlpJson(events: readonly TraceEvent[]): string {
  const run = events.find((e): e is RunEvent => e.type === 'run');
  const runId = run?.runId ?? 'run';
  const lines: string[] = [];
  for (const episode of gatherEpisodes(events))
    lines.push(JSON.stringify(episodeRequest(runId, run, episode)));
  return lines.length ? lines.join('\n') + '\n' : '';
}

function gatherEpisodes(events: readonly TraceEvent[]): EpisodeEvents[] {
  const byId = new Map<string, EpisodeEvents>();
  for (const e of events) {
    if (e.type === 'episode') {
      byId.set(e.episodeId, {
        episode: e,
        turns: [],
        rehearsals: new Map(),
        actuals: new Map(),
        fidelity: new Map(),
      });
      continue;
    }
    const into = 'episodeId' in e ? byId.get(e.episodeId) : undefined;
    if (!into) continue;
    if (e.type === 'turn') into.turns.push(e);
    else if (e.type === 'call.rehearsal') into.rehearsals.set(e.callId, e);
    else if (e.type === 'call.actual') into.actuals.set(e.callId, e);
    else if (e.type === 'fidelity') into.fidelity.set(e.callId, e);
    else if (e.type === 'episode.end') into.end = e;
  }
  return [...byId.values()];
}

function hexId(bytes: number, ...parts: string[]): string {
  return createHash('sha256')
    .update(parts.join('\0'))
    .digest('hex')
    .slice(0, bytes * 2);
}

function nanos(ts: string | undefined): string {
  const ms = ts ? Date.parse(ts) : NaN;
  return Number.isFinite(ms) ? (BigInt(ms) * 1_000_000n).toString() : '0';
}

/** A JSON value as OTLP's AnyValue. */
function anyValue(v: JsonValue): JsonObject {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number')
    return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (v === null) return {};
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  return {
    kvlistValue: { values: Object.entries(v).map(([key, x]) => ({ key, value: anyValue(x) })) },
  };
}

function attributes(o: Record<string, JsonValue | undefined>): JsonObject[] {
  return Object.entries(o).flatMap(([key, v]) =>
    v === undefined ? [] : [{ key, value: anyValue(v) }],
  );
}

const textPart = (content: string): JsonObject => ({ type: 'text', content });

/** A turn as the current conventions' assistant message: its text, its calls as tool_call parts. */
function assistantMessage(turn: TurnEvent): JsonObject {
  const calls = turn.parse.kind === 'calls' ? turn.parse.calls : [];
  // A turn that did not parse keeps its raw text: the importer's act parser finds the error again.
  const text =
    turn.parse.kind === 'final'
      ? turn.parse.answer
      : turn.parse.kind === 'error'
        ? turn.text
        : removeBlocks(turn.text, TOOL_CALL_OPEN.trim(), TOOL_CALL_CLOSE.trim()).trim();
  return {
    role: 'assistant',
    parts: [
      ...(text ? [textPart(text)] : []),
      ...calls.map((c) => ({
        type: 'tool_call',
        id: c.callId,
        name: c.name,
        arguments: c.arguments,
      })),
    ],
    finish_reason: calls.length ? 'tool_call' : 'stop',
  };
}

function episodeRequest(runId: string, run: RunEvent | undefined, e: EpisodeEvents): JsonObject {
  const { episodeId } = e.episode;
  const traceId = hexId(16, runId, episodeId);
  const rootId = hexId(8, runId, episodeId, 'invoke_agent');
  const agent = run?.policy.id ?? 'policy';
  const spans: JsonObject[] = [];
  const history: JsonObject[] = [];
  if (e.episode.system !== undefined)
    history.push({ role: 'system', parts: [textPart(e.episode.system)] });
  const tools = e.episode.tools?.map((t) => ({ type: 'function', ...t }));
  for (const [i, turn] of e.turns.entries()) {
    const user = turn.user ?? (i === 0 ? e.episode.instruction : undefined);
    if (user !== undefined) history.push({ role: 'user', parts: [textPart(user)] });
    const calls = turn.parse.kind === 'calls' ? turn.parse.calls : [];
    const output = assistantMessage(turn);
    spans.push({
      traceId,
      spanId: hexId(8, runId, turn.turnId, 'chat'),
      parentSpanId: rootId,
      name: `chat ${agent}`,
      kind: SPAN_KIND.client,
      startTimeUnixNano: nanos(turn.ts),
      endTimeUnixNano: nanos(turn.ts),
      attributes: attributes({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': agent,
        'gen_ai.input.messages': JSON.stringify(history),
        'gen_ai.output.messages': JSON.stringify([output]),
        'gen_ai.tool.definitions': tools ? JSON.stringify(tools) : undefined,
        'studio.turn.id': turn.turnId,
      }),
    });
    history.push(output);
    for (const c of calls) {
      const actual = e.actuals.get(c.callId);
      const result = actual ? actualEventToolText(actual) : undefined;
      history.push({
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: c.callId, response: result ?? '' }],
      });
      spans.push(toolSpan(runId, traceId, rootId, c, e, result));
    }
  }
  spans.unshift({
    traceId,
    spanId: rootId,
    name: `invoke_agent ${agent}`,
    kind: SPAN_KIND.internal,
    startTimeUnixNano: nanos(e.episode.ts),
    endTimeUnixNano: nanos(e.end?.ts ?? e.turns.at(-1)?.ts ?? e.episode.ts),
    attributes: attributes({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': agent,
      'studio.run.id': runId,
      'studio.episode.id': episodeId,
      'studio.task.id': e.episode.taskId,
      'studio.episode.status': e.end?.status,
      'studio.episode.reward': e.end?.reward ?? undefined,
    }),
    ...(e.end?.status === 'failed' && e.end.error
      ? { status: { code: 2, message: e.end.error.message } }
      : {}),
  });
  return {
    resourceSpans: [
      {
        resource: { attributes: attributes({ 'service.name': OTLP_EXPORT_SCOPE }) },
        scopeSpans: [{ scope: { name: OTLP_EXPORT_SCOPE }, spans }],
      },
    ],
  };
}

function toolSpan(
  runId: string,
  traceId: string,
  parentSpanId: string,
  call: { callId: string; name: string; arguments: JsonValue },
  e: EpisodeEvents,
  result: string | undefined,
): JsonObject {
  const actual = e.actuals.get(call.callId);
  const rehearsal = e.rehearsals.get(call.callId);
  const fidelity = e.fidelity.get(call.callId);
  const failed = actual?.error !== undefined || actual?.response?.isError === true;
  const r = rehearsal?.result;
  return {
    traceId,
    spanId: hexId(8, runId, call.callId, 'execute_tool'),
    parentSpanId,
    name: `execute_tool ${call.name}`,
    kind: SPAN_KIND.internal,
    startTimeUnixNano: nanos(rehearsal?.ts ?? actual?.ts),
    endTimeUnixNano: nanos(actual?.ts ?? rehearsal?.ts),
    attributes: attributes({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.callId,
      'gen_ai.tool.call.arguments': canonicalJson(call.arguments),
      'gen_ai.tool.call.result': result,
      'error.type': actual?.error?.code ?? (failed ? 'tool_error' : undefined),
      'studio.rehearsal.result': r?.ok ? canonicalJson(r.value) : undefined,
      'studio.rehearsal.error.code': r && !r.ok ? r.code : undefined,
      'studio.rehearsal.text': rehearsal?.text,
      'studio.actual.source': actual?.source,
    }),
    ...(failed
      ? { status: { code: 2, message: actual?.error?.message ?? 'the tool answered an error' } }
      : {}),
    ...(fidelity ? { events: evaluationEvents(fidelity) } : {}),
  };
}

/** Each fidelity score as a `gen_ai.evaluation.result` event; a call not comparable as one event saying why. */
function evaluationEvents(f: FidelityEvent): JsonObject[] {
  const event = (o: Record<string, JsonValue | undefined>): JsonObject => ({
    name: 'gen_ai.evaluation.result',
    timeUnixNano: nanos(f.ts),
    attributes: attributes(o),
  });
  if (!f.scores)
    return [
      event({
        'gen_ai.evaluation.name': 'studio.fidelity',
        'gen_ai.evaluation.score.label': 'not_comparable',
        'gen_ai.evaluation.explanation': f.reason,
      }),
    ];
  return Object.entries(f.scores).map(([name, score]) =>
    event({
      'gen_ai.evaluation.name': `studio.fidelity.${name}`,
      'gen_ai.evaluation.score.value': typeof score === 'boolean' ? (score ? 1 : 0) : score,
      'gen_ai.evaluation.score.label':
        typeof score === 'boolean' ? (score ? 'match' : 'mismatch') : undefined,
    }),
  );
}
