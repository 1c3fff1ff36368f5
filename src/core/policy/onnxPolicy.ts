import { Disposable } from '../base/disposable';
import type { Event } from '../base/event';
import { parseActOutput } from '../protocol/actParser';
import { EXECUTION_RESULT_CLOSE, parseRehearsalOutput } from '../protocol/rehearsalParser';
import type { PolicyInfo } from '../trace/format/schema';
import type { PolicyHostOptions } from './hostClient';
import { PolicyHostClient } from './hostClient';
import type { DeviceReport } from './onnx/device';
import type { SamplingSettings } from './sampling/sampling';
import { GREEDY } from './sampling/sampling';
import type { ActRequest, ActResult, Policy, RehearseRequest, RehearseResult } from './types';
import { DEFAULT_MAX_TOKENS } from './types';
import type { StudioError } from '../base/errors';
import { IdentifierSlots, RevealingStream } from '../protocol/identifierSlots';
import { readPolicySettings } from './policySettings';

/**
 * The local policy: an ONNX model served by the policy host process. Act and rehearse prompts go
 * through the model's chat template; outputs are parsed here with the protocol's parsers.
 */
export class OnnxPolicy extends Disposable implements Policy {
  readonly info: PolicyInfo;
  readonly onDidFail: Event<StudioError>;

  /**
   * @param identifierSlots the model reads identifiers as slots (its `rehearsal_config.json` says
   * `"identifierSlots": true`): prompts are hidden and outputs revealed here, so everything outside
   * (traces, parsers, tools) sees real values.
   */
  private constructor(
    private readonly host: PolicyHostClient,
    modelDir: string,
    private readonly defaults: SamplingSettings,
    readonly identifierSlots: boolean,
    /** A tool call's name is decoded as one of the offered tools' names only. */
    readonly constrainToolNames = false,
  ) {
    super();
    this._register(host);
    this.info = {
      kind: 'onnx',
      id: modelDir,
      device: host.device.device,
      devices: host.device.attempts.map((a) => ({ ...a })),
    };
    this.onDidFail = host.onDidCrash;
  }

  /** Starts a host for a model folder. */
  static async start(
    options: PolicyHostOptions & {
      sampling?: Partial<SamplingSettings>;
      /** Decode a tool call's name as one of the offered tools' only (vLLM's guided decoding). */
      constrainToolNames?: boolean;
    },
  ): Promise<OnnxPolicy> {
    const { identifierSlots } = await readPolicySettings(options.modelDir);
    const host = await PolicyHostClient.start(options);
    return new OnnxPolicy(
      host,
      options.modelDir,
      { ...GREEDY, ...options.sampling },
      identifierSlots === true,
      options.constrainToolNames === true,
    );
  }

  get device(): DeviceReport {
    return this.host.device;
  }

  /** The host process id. */
  get pid(): number | undefined {
    return this.host.pid;
  }

  /** The host's token counters (prefilled vs reused prompt tokens). */
  stats() {
    return this.host.stats();
  }

  async act(request: ActRequest): Promise<ActResult> {
    const started = performance.now();
    const slots = this.identifierSlots ? new IdentifierSlots() : undefined;
    const { onToken } = request;
    const stream = onToken && slots ? new RevealingStream(slots, onToken) : undefined;
    const result = await this.host.generate(
      {
        messages: slots ? slots.hideMessages(request.messages) : request.messages,
        tools: request.tools,
        ...(this.constrainToolNames ? { toolNames: request.tools.map((t) => t.name) } : {}),
        session: request.session,
        n: 1,
        maxTokens: request.maxTokens ?? DEFAULT_MAX_TOKENS.act,
        sampling: { ...this.defaults, ...request.sampling },
      },
      stream
        ? (_sample, delta) => stream.push(delta)
        : onToken
          ? (_sample, delta) => onToken(delta)
          : undefined,
      request.signal,
    );
    stream?.end();
    const sample = result.samples[0];
    const text = slots ? slots.reveal(sample.text) : sample.text;
    return {
      text,
      ...(text !== sample.text ? { sampledText: sample.text } : {}),
      parse: parseActOutput(text),
      finish: sample.finish,
      tokens: {
        prompt: result.promptTokens,
        completion: sample.completionTokens,
        reused: result.reused,
      },
      latencyMs: performance.now() - started,
    };
  }

  async rehearse(request: RehearseRequest): Promise<RehearseResult> {
    const started = performance.now();
    const slots = this.identifierSlots ? new IdentifierSlots() : undefined;
    const streams = new Map<number, RevealingStream>();
    const onToken =
      request.onToken && slots
        ? (sample: number, delta: string) => {
            let stream = streams.get(sample);
            if (!stream)
              streams.set(
                sample,
                (stream = new RevealingStream(slots, (d) => request.onToken!(sample, d))),
              );
            stream.push(delta);
          }
        : request.onToken;
    const result = await this.host.generate(
      {
        messages: slots ? slots.hideMessages(request.messages) : request.messages,
        tools: [],
        session: request.session,
        n: request.n ?? 1,
        maxTokens: request.maxTokens ?? DEFAULT_MAX_TOKENS.rehearse,
        sampling: { ...this.defaults, ...request.sampling },
        stopStrings: [EXECUTION_RESULT_CLOSE],
      },
      onToken,
      request.signal,
    );
    for (const stream of streams.values()) stream.end();
    const texts = result.samples.map((s) => (slots ? slots.reveal(s.text) : s.text));
    return {
      samples: result.samples.map((s, i) => ({
        text: texts[i],
        ...(texts[i] !== s.text ? { sampledText: s.text } : {}),
        parse: parseRehearsalOutput(texts[i]),
        finish: s.finish,
      })),
      tokens: {
        prompt: result.promptTokens,
        completion: result.samples.reduce((n, s) => n + s.completionTokens, 0),
        reused: result.reused,
      },
      latencyMs: performance.now() - started,
    };
  }

  endSession(session: string): void {
    this.host.endSession(session);
  }
}
