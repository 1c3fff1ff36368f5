import type { JsonValue } from '../../src/core/base/json';
import { parseActOutput } from '../../src/core/protocol/actParser';
import { formatRehearsal, parseRehearsalOutput } from '../../src/core/protocol/rehearsalParser';
import type { ToolDefinition } from '../../src/core/protocol/types';
import { canonicalJson } from '../../src/core/base/canonicalJson';
import { fidelityEventFor } from '../../src/core/trace/index/callView';
import { callId, episodeId, turnId } from '../../src/core/trace/format/ids';
import type {
  CallActualEvent,
  CallRehearsalEvent,
  CheckVerdict,
  EpisodeStatus,
  NewTraceEvent,
  RunMode,
  TraceEvent,
  TurnCall,
} from '../../src/core/trace/format/schema';
import { serializeTraceEvent, TraceWriter } from '../../src/core/trace/format/writer';

/**
 * Builds realistic traces for tests and samples, through the real protocol parsers and fidelity
 * scoring (a test-data builder, as js-debug's tests use). Timestamps are fixed so output is stable.
 */
export class TraceBuilder {
  readonly events: TraceEvent[] = [];
  private clock = Date.UTC(2026, 10, 29, 12, 0, 0);
  private episodes = 0;

  constructor(
    readonly runId: string,
    readonly mode: RunMode = 'shadow',
    policyId = 'models/default',
  ) {
    this.push({
      type: 'run',
      runId,
      mode,
      policy: { kind: 'onnx', id: policyId, device: 'cpu' },
      studioVersion: '0.1.0',
    });
  }

  push(event: NewTraceEvent): TraceEvent {
    this.clock += 250;
    const full = { v: 1, ts: new Date(this.clock).toISOString(), ...event } as TraceEvent;
    this.events.push(full);
    return full;
  }

  episode(
    taskId: string,
    options: { instruction?: string; tools?: ToolDefinition[] } = {},
  ): EpisodeBuilder {
    const index = this.episodes++;
    const id = episodeId(index);
    this.push({ type: 'episode', episodeId: id, index, taskId, mode: this.mode, ...options });
    return new EpisodeBuilder(this, id);
  }

  end(status: 'completed' | 'failed' | 'cancelled' = 'completed'): this {
    this.push({ type: 'run.end', runId: this.runId, status });
    return this;
  }

  /** The trace as file content. */
  text(): string {
    return this.events.map((e) => serializeTraceEvent(e) + '\n').join('');
  }

  /** Writes the trace through the real writer. */
  async write(file: string): Promise<void> {
    const writer = await TraceWriter.open(file, { durable: false });
    for (const e of this.events) await writer.append(e);
    await writer.close();
  }
}

/** Builds one episode's turns and calls. */
export class EpisodeBuilder {
  private turns = 0;

  constructor(
    private readonly trace: TraceBuilder,
    readonly id: string,
  ) {}

  /** A turn whose raw text is parsed by the real act parser. */
  turn(text: string, user?: string): TurnBuilder {
    const id = turnId(this.id, this.turns++);
    const parsed = parseActOutput(text);
    let calls: TurnCall[] = [];
    const parse =
      parsed.kind === 'calls'
        ? {
            kind: 'calls' as const,
            calls: (calls = parsed.calls.map((c, i) => ({
              callId: callId(id, i),
              name: c.name,
              arguments: c.arguments,
            }))),
          }
        : parsed.kind === 'final'
          ? { kind: 'final' as const, answer: parsed.text }
          : { kind: 'error' as const, code: parsed.error.code, message: parsed.error.message };
    this.trace.push({
      type: 'turn',
      episodeId: this.id,
      turnId: id,
      index: this.turns - 1,
      text,
      parse,
      ...(user ? { user } : {}),
      tokens: { prompt: 400, completion: 40, reused: 320 },
      latencyMs: 120,
    });
    return new TurnBuilder(this.trace, this.id, id, calls);
  }

  end(
    result: {
      status?: EpisodeStatus;
      reward?: number | null;
      success?: boolean | null;
      checks?: CheckVerdict[];
      answer?: string;
      error?: { code: string; message: string };
    } = {},
  ): void {
    this.trace.push({
      type: 'episode.end',
      episodeId: this.id,
      status: result.status ?? 'completed',
      reward: result.reward ?? null,
      success: result.success ?? null,
      ...(result.checks ? { checks: result.checks } : {}),
      ...(result.answer ? { answer: result.answer } : {}),
      ...(result.error ? { error: result.error } : {}),
    });
  }
}

/** Adds rehearsals and actual responses to one turn's calls. */
export class TurnBuilder {
  private readonly rehearsals = new Map<string, CallRehearsalEvent>();

  constructor(
    private readonly trace: TraceBuilder,
    readonly episodeId: string,
    readonly id: string,
    readonly calls: TurnCall[],
  ) {}

  /** The rehearse role's raw output for call `i`, parsed by the real rehearsal parser. */
  rehearseText(i: number, text: string): this {
    const call = this.calls[i];
    const parsed = parseRehearsalOutput(text);
    const result = parsed.ok
      ? { ok: true as const, value: parsed.value }
      : { ok: false as const, code: parsed.error.code, message: parsed.error.message };
    const e = this.trace.push({
      type: 'call.rehearsal',
      episodeId: this.episodeId,
      turnId: this.id,
      callId: call.callId,
      tool: call.name,
      arguments: call.arguments,
      text,
      result,
      tokens: { prompt: 600, completion: 60 },
      latencyMs: 90,
    });
    this.rehearsals.set(call.callId, e as CallRehearsalEvent);
    return this;
  }

  /** A well-formed rehearsal predicting `value` for call `i`. */
  rehearse(i: number, value: JsonValue, think?: string): this {
    return this.rehearseText(i, formatRehearsal(canonicalJson(value), think));
  }

  /** The real tool's answer to call `i`: JSON (as MCP text content), raw text, or an error. */
  actual(
    i: number,
    response: {
      json?: JsonValue;
      text?: string;
      isError?: boolean;
      error?: { code: string; message: string };
    },
  ): this {
    const call = this.calls[i];
    const body =
      response.error && response.json === undefined && response.text === undefined
        ? { error: response.error }
        : {
            response: {
              text: [response.text ?? canonicalJson(response.json ?? null)],
              ...(response.isError ? { isError: true } : {}),
            },
          };
    const e = this.trace.push({
      type: 'call.actual',
      episodeId: this.episodeId,
      turnId: this.id,
      callId: call.callId,
      tool: call.name,
      source: 'mcp',
      ...body,
      server: 'retail',
      latencyMs: 4,
    }) as CallActualEvent;
    const r = this.rehearsals.get(call.callId);
    if (r) this.trace.push(fidelityEventFor(r, e));
    return this;
  }
}
