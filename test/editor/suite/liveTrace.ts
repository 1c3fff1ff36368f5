/**
 * Writes a trace the way a run does, a few events at a time, through the real `TraceWriter`: the
 * editor tests use it to watch the Trace Explorer and the call diffs follow a run as it is written.
 */
import type { TraceEvent } from '../../../src/core/trace/format/schema';
import { TraceWriter } from '../../../src/core/trace/format/writer';
import type { TurnBuilder } from '../../builders/traceBuilder';
import { TraceBuilder } from '../../builders/traceBuilder';
import { SAMPLE_TOOLS } from '../../builders/samples';

/** An act turn's raw text that calls `name` with `args`, as the policy writes it. */
export function toolCallText(name: string, args: object): string {
  return `\n<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
}

/** A trace being written: the builder says what to write, `flush()` writes what is new. */
export class LiveTrace {
  readonly builder: TraceBuilder;
  private written = 0;

  private constructor(
    private readonly writer: TraceWriter,
    runId: string,
  ) {
    this.builder = new TraceBuilder(runId, 'shadow');
  }

  /** Opens `file` for appending; the run event is written by the first `flush()`. */
  static async open(file: string, runId: string): Promise<LiveTrace> {
    return new LiveTrace(await TraceWriter.open(file, { durable: true }), runId);
  }

  /** An episode of one `get_order_details` turn, rehearsed but not yet answered by the tool. */
  rehearsedCall(taskId: string, orderId: string, rehearsed: object): TurnBuilder {
    const episode = this.builder.episode(taskId, {
      instruction: `What is the status of order ${orderId}?`,
      tools: SAMPLE_TOOLS,
    });
    return episode
      .turn(
        toolCallText('get_order_details', { order_id: orderId }),
        `What is the status of order ${orderId}?`,
      )
      .rehearse(0, rehearsed as never);
  }

  /** Appends the events built since the last flush. */
  async flush(): Promise<TraceEvent[]> {
    const fresh = this.builder.events.slice(this.written);
    for (const e of fresh) await this.writer.append(e);
    this.written += fresh.length;
    return fresh;
  }

  close(): Promise<void> {
    return this.writer.close();
  }
}
