import type { FinishReason } from '../../trace/format/schema';
import type { SamplingSettings } from '../sampling/sampling';
import { sampleToken, seededRandom } from '../sampling/sampling';
import { allowedNameTokens, maskLogits } from '../sampling/toolNameConstraint';
import { TextStream } from './textStream';

/** One generation: a prompt, how many samples, how to sample and when to stop. */
export interface GenerateRequest {
  promptIds: number[];
  /** KV session to reuse and update (an episode's act or rehearse conversation). */
  session?: string;
  n: number;
  maxTokens: number;
  /** End-of-sequence tokens do not stop a sample before this many tokens (benchmarks). */
  minTokens?: number;
  sampling: SamplingSettings;
  /** Text that ends a sample (kept in the output); needs `decode`. */
  stopStrings?: string[];
  /** Token ids to text, for streaming, stop strings and the final texts. */
  decode?: (ids: number[]) => string;
  /**
   * Decoding constrained to these tool names: the `"name"` of a `<tool_call>` is always one of
   * them (see toolNameConstraint.ts). Needs `decode` and `tokenPieces`.
   */
  toolNames?: readonly string[];
  /** Each token id's text (ids below `size`), for the tool-name constraint; memoised by its owner. */
  tokenPieces?: (size: number) => readonly string[];
  signal?: AbortSignal;
  onToken?: (sample: number, delta: string) => void;
}

/** Why a sample stopped. */
export type { FinishReason };

/** A generation's outcome, with the counters the benchmark and the status bar read. */
export interface GenerateResult {
  samples: { ids: number[]; text: string; finish: FinishReason }[];
  promptTokens: number;
  /** Prompt tokens that had to be encoded (0 with `reused`, when cancelled before its prefill). */
  prefilled: number;
  /** Prompt tokens whose keys and values came from the session's cache. */
  reused: number;
  prefillMs: number;
  /** From the end of this request's prefill to its last token (other requests' steps included). */
  decodeMs: number;
  /** Forward passes after the prefill that decoded this request's samples. */
  decodeSteps: number;
  /** The samples read one shared copy of the prompt's cache (the cascade graph). */
  sharedPrefix: boolean;
  /** The most sequences (of every request in flight) that one of this request's decode passes held. */
  batchRows: number;
  /** Time spent waiting for room in the batch before the prefill. */
  queuedMs: number;
}

/**
 * The samples of one request while it decodes: each with its own random generator (seeded from the
 * request's seed and the sample's index only, so what a request draws never depends on what it was
 * batched with), its own text stream, and the rules that end it.
 */
export class Generation {
  readonly samples: { ids: number[]; text: string; finish: FinishReason | undefined }[];
  private readonly randoms: (() => number)[];
  private readonly streams: TextStream[] | undefined;
  private readonly eos: ReadonlySet<number>;

  constructor(
    private readonly req: GenerateRequest,
    readonly n: number,
    eosTokenIds: readonly number[],
  ) {
    this.randoms = Array.from({ length: n }, (_, i) =>
      seededRandom(req.sampling.seed * 7919 + i + 1),
    );
    this.samples = Array.from({ length: n }, () => ({ ids: [], text: '', finish: undefined }));
    const decode = req.decode;
    this.streams =
      decode && (req.onToken || req.stopStrings?.length || this.constrained)
        ? this.samples.map(() => new TextStream(decode))
        : undefined;
    this.eos = new Set(eosTokenIds);
  }

  private get constrained(): boolean {
    return !!(this.req.toolNames?.length && this.req.tokenPieces && this.req.decode);
  }

  /** Picks sample `i`'s next token from the logits row at `offset`, records it, and applies the stop rules. */
  pick(i: number, logits: Float32Array, offset: number, vocabSize: number): number {
    const { req } = this;
    const s = this.samples[i];
    if (this.constrained) {
      const allowed = allowedNameTokens(s.text, req.toolNames!, req.tokenPieces!(vocabSize));
      if (allowed) maskLogits(logits, offset, vocabSize, allowed);
    }
    const token = sampleToken(logits, offset, vocabSize, req.sampling, this.randoms[i]);
    s.ids.push(token);
    if (this.eos.has(token) && s.ids.length > (req.minTokens ?? 0)) {
      s.finish = 'eos';
      return token;
    }
    if (this.streams) {
      const delta = this.streams[i].push(token);
      if (delta) {
        s.text += delta;
        req.onToken?.(i, delta);
        if (req.stopStrings?.some((stop) => s.text.includes(stop))) {
          s.finish = 'stop';
          return token;
        }
      }
    }
    if (s.ids.length >= req.maxTokens) s.finish = 'length';
    return token;
  }

  isFinished(i: number): boolean {
    return this.samples[i].finish !== undefined;
  }

  /** Ends every sample still running when the request was cancelled. */
  cancelIfAborted(): void {
    if (this.req.signal?.aborted) for (const s of this.samples) s.finish ??= 'cancelled';
  }

  get finished(): boolean {
    return this.samples.every((s) => s.finish !== undefined);
  }

  /** The samples as returned: texts decoded whole (end tokens left out). */
  results(): GenerateResult['samples'] {
    const decode = this.req.decode;
    return this.samples.map((s) => ({
      ids: s.ids,
      text: decode ? decode(s.ids.filter((id) => !this.eos.has(id))) : s.text,
      finish: s.finish ?? 'length',
    }));
  }
}
