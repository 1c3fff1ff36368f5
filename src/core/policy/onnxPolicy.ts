import { Disposable } from '../base/disposable';
import type { Event } from '../base/event';
import { parseActOutput } from '../protocol/actParser';
import { EXECUTION_RESULT_CLOSE, parseRehearsalOutput } from '../protocol/rehearsalParser';
import type { PolicyInfo } from '../trace/schema';
import type { PolicyHostOptions } from './hostClient';
import { PolicyHostClient } from './hostClient';
import type { DeviceReport } from './onnx/device';
import type { SamplingSettings } from './sampling';
import { GREEDY } from './sampling';
import type { ActRequest, ActResult, Policy, RehearseRequest, RehearseResult } from './types';
import { DEFAULT_MAX_TOKENS } from './types';
import type { StudioError } from '../base/errors';

/**
 * The local policy: an ONNX model served by the policy host process. Act and rehearse prompts go
 * through the model's chat template; outputs are parsed here with the protocol's parsers.
 */
export class OnnxPolicy extends Disposable implements Policy {
  readonly info: PolicyInfo;
  readonly onDidFail: Event<StudioError>;

  private constructor(private readonly host: PolicyHostClient, modelDir: string, private readonly defaults: SamplingSettings) {
    super();
    this._register(host);
    this.info = { kind: 'onnx', id: modelDir, device: host.device.device, devices: host.device.attempts.map((a) => ({ ...a })) };
    this.onDidFail = host.onDidCrash;
  }

  /** Starts a host for a model folder. */
  static async start(options: PolicyHostOptions & { sampling?: Partial<SamplingSettings> }): Promise<OnnxPolicy> {
    const host = await PolicyHostClient.start(options);
    return new OnnxPolicy(host, options.modelDir, { ...GREEDY, ...options.sampling });
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
    const result = await this.host.generate(
      { messages: request.messages, tools: request.tools, session: request.session, n: 1, maxTokens: request.maxTokens ?? DEFAULT_MAX_TOKENS.act, sampling: { ...this.defaults, ...request.sampling } },
      request.onToken ? (_sample, delta) => request.onToken!(delta) : undefined,
      request.signal,
    );
    const sample = result.samples[0];
    return {
      text: sample.text,
      parse: parseActOutput(sample.text),
      finish: sample.finish,
      tokens: { prompt: result.promptTokens, completion: sample.completionTokens, reused: result.reused },
      latencyMs: performance.now() - started,
    };
  }

  async rehearse(request: RehearseRequest): Promise<RehearseResult> {
    const started = performance.now();
    const result = await this.host.generate(
      {
        messages: request.messages,
        tools: [],
        session: request.session,
        n: request.n ?? 1,
        maxTokens: request.maxTokens ?? DEFAULT_MAX_TOKENS.rehearse,
        sampling: { ...this.defaults, ...request.sampling },
        stopStrings: [EXECUTION_RESULT_CLOSE],
      },
      request.onToken,
      request.signal,
    );
    return {
      samples: result.samples.map((s) => ({ text: s.text, parse: parseRehearsalOutput(s.text), finish: s.finish })),
      tokens: { prompt: result.promptTokens, completion: result.samples.reduce((n, s) => n + s.completionTokens, 0), reused: result.reused },
      latencyMs: performance.now() - started,
    };
  }

  endSession(session: string): void {
    this.host.endSession(session);
  }
}
