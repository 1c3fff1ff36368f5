import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as ort from 'onnxruntime-node';
import { firstLine } from '../../base/clip';
import { StudioError, errorMessage } from '../../base/errors';
import type { SamplingSettings } from '../sampling/sampling';
import { sampleToken, seededRandom } from '../sampling/sampling';
import type { DeviceAttempt, DeviceReport, DeviceSetting } from './device';
import { devicesToTry, executionProvider, explainDeviceFailure } from './device';
import type { PastTensors } from './kvCache';
import {
  commonPrefixLength,
  emptyPast,
  pastAsPrefix,
  presentsAsPast,
  tilePast,
  truncatePast,
} from './kvCache';
import type { ModelFolderInfo } from './modelFolder';
import { TextStream } from './textStream';

/** Models below this size decode fastest on one thread: thread hand-offs cost more than the work. */
const SMALL_MODEL_BYTES = 64 * 1024 * 1024;

/**
 * Session threading: an explicit count, or one sequential thread for small models on CPU (benchmarks
 * build their bare loops with it). A model's size counts its external weights (`model.onnx_data`, as
 * large exports write them): judged by the graph file alone, a 0.5B model ran on one thread, 4.2x
 * slower than onnxruntime's default on 16 cores.
 */
export async function threadOptions(
  file: string,
  device: string,
  threads: number | undefined,
): Promise<ort.InferenceSession.SessionOptions> {
  if (threads && threads > 0)
    return { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential' };
  if (device !== 'cpu') return {};
  const size =
    (await fs.stat(file)).size +
    (await fs.stat(`${file}_data`).then(
      (s) => s.size,
      () => 0,
    ));
  return size < SMALL_MODEL_BYTES
    ? { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' }
    : {};
}

/** GPU-resident tensors hold device memory until disposed; CPU ones are left to the garbage collector. */
function releaseDeviceTensors(past: PastTensors): void {
  for (const t of Object.values(past)) if (t.location === 'gpu-buffer') t.dispose();
}

function kvOutputLocations(info: ModelFolderInfo): Record<string, ort.Tensor.DataLocation> {
  const out: Record<string, ort.Tensor.DataLocation> = { logits: 'cpu' };
  for (let i = 0; i < info.numLayers; i++) {
    out[`present.${i}.key`] = 'gpu-buffer';
    out[`present.${i}.value`] = 'gpu-buffer';
  }
  return out;
}

/**
 * Inputs of one forward pass: `batch` rows of `ids.length / batch` new tokens after `pastLength`
 * cached ones (the same positions in every row; nothing is padding). With a `prefix` (the prompt's
 * cache, batch 1) they are the cascade graph's, which has no attention mask and always positions.
 */
export function forwardInputs(
  ids: readonly number[],
  pastLength: number,
  batch: number,
  past: PastTensors,
  options: { positionIds: boolean; prefix?: PastTensors },
): Record<string, ort.Tensor> {
  const { prefix } = options;
  const seq = ids.length / batch;
  const total = pastLength + seq;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor(
      'int64',
      BigInt64Array.from(ids, (x) => BigInt(x)),
      [batch, seq],
    ),
    ...past,
    ...prefix,
  };
  if (!prefix)
    feeds['attention_mask'] = new ort.Tensor('int64', new BigInt64Array(batch * total).fill(1n), [
      batch,
      total,
    ]);
  if (prefix || options.positionIds) {
    const positions = new BigInt64Array(batch * seq);
    for (let b = 0; b < batch; b++)
      for (let j = 0; j < seq; j++) positions[b * seq + j] = BigInt(pastLength + j);
    feeds['position_ids'] = new ort.Tensor('int64', positions, [batch, seq]);
  }
  return feeds;
}

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
  signal?: AbortSignal;
  onToken?: (sample: number, delta: string) => void;
}

/** Why a sample stopped. */
export type FinishReason = 'eos' | 'stop' | 'length' | 'cancelled';

/** A generation's outcome, with the counters the benchmark and the status bar read. */
export interface GenerateResult {
  samples: { ids: number[]; text: string; finish: FinishReason }[];
  promptTokens: number;
  /** Prompt tokens that had to be encoded. */
  prefilled: number;
  /** Prompt tokens whose keys and values came from the session's cache. */
  reused: number;
  prefillMs: number;
  decodeMs: number;
  /** Forward passes after the prefill. */
  decodeSteps: number;
  /** The samples read one shared copy of the prompt's cache (the cascade graph). */
  sharedPrefix: boolean;
}

interface KvSession {
  ids: number[];
  past: PastTensors;
  lastUsed: number;
}

const MAX_SESSIONS = 8;

/**
 * The forward passes of a causal LM in the Hugging Face ONNX layout, on onnxruntime-node, with a
 * decode loop of our own: it keeps each episode's KV cache between turns (only the new suffix of a
 * prompt is encoded) and decodes n samples of one prompt as one batch after a single shared prefill.
 * With the folder's cascade graph the n samples read the prompt's cache in place (one copy for all);
 * without it each sample carries a copy, and every step concatenates and returns all n.
 * It works on token ids; text goes through {@link OnnxEngine}.
 */
export class OnnxDecoder {
  private readonly sessions = new Map<string, KvSession>();

  private constructor(
    readonly info: ModelFolderInfo,
    readonly device: DeviceReport,
    private readonly model: ort.InferenceSession,
    private readonly hasPositionIds: boolean,
    /** The cascade graph, when the folder has one. */
    private readonly cascade: ort.InferenceSession | undefined,
  ) {}

  /** Creates the ONNX session on the first device of the setting that works. */
  static async load(
    info: ModelFolderInfo,
    setting: DeviceSetting = 'auto',
    threads?: number,
    options: { kvOnDevice?: boolean } = {},
  ): Promise<OnnxDecoder> {
    const attempts: DeviceAttempt[] = [];
    const main = path.join(info.dir, info.onnxFile);
    let file = main;
    for (const device of devicesToTry(setting)) {
      try {
        // On a GPU the KV cache can stay in device memory between steps instead of a round trip per token.
        const location =
          options.kvOnDevice && device === 'webgpu'
            ? { preferredOutputLocation: kvOutputLocations(info) }
            : {};
        const sessionOptions = {
          executionProviders: [executionProvider(device)],
          logSeverityLevel: 3 as const,
          ...location,
          ...(await threadOptions(main, device, threads)),
        };
        file = main;
        const model = await ort.InferenceSession.create(file, sessionOptions);
        let cascade: ort.InferenceSession | undefined;
        if (info.cascadeFile) {
          file = path.join(info.dir, info.cascadeFile);
          cascade = await ort.InferenceSession.create(file, sessionOptions).catch(
            async (err: unknown) => {
              await model.release();
              throw err;
            },
          );
        }
        checkGraphLayers(info, model);
        attempts.push({ device, ok: true });
        return new OnnxDecoder(
          info,
          { device, attempts },
          model,
          model.inputNames.includes('position_ids'),
          cascade,
        );
      } catch (err) {
        if (err instanceof StudioError && err.code === 'MODEL_FOLDER_INCONSISTENT') throw err;
        // The CPU provider is always there: when it cannot load the file, the file is at fault.
        if (device === 'cpu')
          throw new StudioError(
            'MODEL_FILE_BROKEN',
            `${file} cannot be loaded (${firstLine(errorMessage(err))}); re-export the model (\`python3 -m trainer export\`).`,
          );
        attempts.push({
          device,
          ok: false,
          reason: explainDeviceFailure(device, errorMessage(err)),
        });
      }
    }
    const why = attempts.map((a) => `${a.device}: ${a.reason}`).join('; ');
    throw new StudioError(
      'DEVICE_UNAVAILABLE',
      `Cannot run ${info.dir} on ${setting === 'auto' ? 'any device' : setting}: ${why}. Set rehearsal.policy.device to "cpu" or "auto".`,
    );
  }

  /** Forgets an episode's KV cache. */
  endSession(key: string): void {
    const session = this.sessions.get(key);
    if (session) releaseDeviceTensors(session.past);
    this.sessions.delete(key);
  }

  /** Generates `n` samples for one prompt. */
  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const { info } = this;
    const prompt = req.promptIds;
    if (prompt.length === 0) throw new StudioError('EMPTY_PROMPT', 'The prompt is empty.');
    if (prompt.length + req.maxTokens > info.maxPositions) {
      throw new StudioError(
        'PROMPT_TOO_LONG',
        `The prompt has ${prompt.length} tokens; with ${req.maxTokens} new tokens it exceeds the model's ${info.maxPositions} positions. Shorten the task or lower max tokens.`,
      );
    }
    const n = Math.max(1, req.n);

    // Reuse the longest cached prefix; at least one prompt token must be fed to get logits.
    const cached = req.session ? this.sessions.get(req.session) : undefined;
    let reused = cached ? Math.min(commonPrefixLength(cached.ids, prompt), prompt.length - 1) : 0;
    let past =
      cached && reused > 0
        ? await truncatePast(cached.past, reused)
        : emptyPast(info.numLayers, info.numKeyValueHeads, info.headDim, 1);
    if (!cached) reused = 0;

    const t0 = performance.now();
    let outputs = await this.model.run(
      forwardInputs(prompt.slice(reused), reused, 1, past, { positionIds: this.hasPositionIds }),
    );
    const prefillMs = performance.now() - t0;
    let logits = outputs['logits'] as ort.Tensor;
    if (logits.dims[logits.dims.length - 1] !== info.vocabSize) {
      throw new StudioError(
        'MODEL_FOLDER_INCONSISTENT',
        `config.json of ${info.dir} says vocab_size ${info.vocabSize}, but its graph gives ${logits.dims[logits.dims.length - 1]} logits a token; the folder mixes two models. Re-export it.`,
      );
    }
    past = presentsAsPast(outputs, info.numLayers);
    const prefillPast = past;
    // n samples: the cascade graph reads the prompt's cache once for all of them and keeps only their
    // own tokens in `past`; the plain graph needs a copy of the prompt's cache per sample.
    const prefix = n > 1 && this.cascade ? pastAsPrefix(prefillPast) : undefined;
    if (prefix) past = emptyPast(info.numLayers, info.numKeyValueHeads, info.headDim, n);
    else if (n > 1) past = await tilePast(past, n);

    const V = info.vocabSize;
    const randoms = Array.from({ length: n }, (_, i) =>
      seededRandom(req.sampling.seed * 7919 + i + 1),
    );
    const samples = Array.from({ length: n }, () => ({
      ids: [] as number[],
      text: '',
      finish: undefined as FinishReason | undefined,
    }));
    const decode = req.decode;
    const streams =
      decode && (req.onToken || req.stopStrings?.length)
        ? samples.map(() => new TextStream(decode))
        : undefined;
    const eos = new Set(info.eosTokenIds);
    const lastPositionOffset = (row: number, seqLen: number) => (row * seqLen + seqLen - 1) * V;
    let seqLen = prompt.length - reused;
    let length = prompt.length;
    const tokens = new Array<number>(n).fill(info.padTokenId);
    let decodeSteps = 0;
    const t1 = performance.now();

    for (let step = 0; ; step++) {
      const data = logits.data as Float32Array;
      for (let i = 0; i < n; i++) {
        const s = samples[i];
        if (s.finish) {
          tokens[i] = info.padTokenId;
          continue;
        }
        // Every sample of the prefill reads the same (single) row; later steps read their own row.
        const row = step === 0 ? 0 : i;
        const token = sampleToken(
          data,
          lastPositionOffset(row, seqLen),
          V,
          req.sampling,
          randoms[i],
        );
        tokens[i] = token;
        s.ids.push(token);
        if (eos.has(token) && s.ids.length > (req.minTokens ?? 0)) {
          s.finish = 'eos';
          continue;
        }
        if (streams) {
          const delta = streams[i].push(token);
          if (delta) {
            s.text += delta;
            req.onToken?.(i, delta);
            if (req.stopStrings?.some((stop) => s.text.includes(stop))) {
              s.finish = 'stop';
              continue;
            }
          }
        }
        if (s.ids.length >= req.maxTokens) s.finish = 'length';
      }
      if (req.signal?.aborted) for (const s of samples) s.finish ??= 'cancelled';
      if (samples.every((s) => s.finish)) break;
      outputs = await (prefix ? this.cascade! : this.model).run(
        forwardInputs(tokens, length, n, past, { positionIds: this.hasPositionIds, prefix }),
      );
      decodeSteps++;
      length++;
      seqLen = 1;
      logits = outputs['logits'] as ort.Tensor;
      const previous = past;
      past = presentsAsPast(outputs, info.numLayers);
      if (previous !== prefillPast) releaseDeviceTensors(previous);
    }
    const decodeMs = performance.now() - t1;
    // n = 1: the cache now covers the prompt and every generated token but the last one; n > 1: the prompt.
    const kept = req.session ? (n === 1 ? past : prefillPast) : undefined;
    for (const t of new Set([prefillPast, past])) if (t !== kept) releaseDeviceTensors(t);
    if (req.session && kept) {
      const ids = n === 1 ? prompt.concat(samples[0].ids.slice(0, -1)) : prompt;
      this.remember(req.session, { ids, past: kept, lastUsed: Date.now() });
    }
    if (decode) for (const s of samples) s.text = decode(s.ids.filter((id) => !eos.has(id)));
    return {
      samples: samples.map((s) => ({ ids: s.ids, text: s.text, finish: s.finish ?? 'length' })),
      promptTokens: prompt.length,
      prefilled: prompt.length - reused,
      reused,
      prefillMs,
      decodeMs,
      decodeSteps,
      sharedPrefix: prefix !== undefined,
    };
  }

  private remember(key: string, session: KvSession): void {
    const replaced = this.sessions.get(key);
    if (replaced && replaced.past !== session.past) releaseDeviceTensors(replaced.past);
    this.sessions.set(key, session);
    if (this.sessions.size <= MAX_SESSIONS) return;
    const oldest = [...this.sessions.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
    this.endSession(oldest[0]);
  }

  async dispose(): Promise<void> {
    this.sessions.clear();
    await this.model.release();
    await this.cascade?.release();
  }
}

/** The graph takes one key and one value cache input per layer that config.json declares, no more and no fewer. */
function checkGraphLayers(info: ModelFolderInfo, model: ort.InferenceSession): void {
  const layers = model.inputNames.filter((n) => /^past_key_values\.\d+\.key$/.test(n)).length;
  if (layers !== info.numLayers) {
    void model.release();
    throw new StudioError(
      'MODEL_FOLDER_INCONSISTENT',
      `config.json of ${info.dir} says num_hidden_layers ${info.numLayers}, but its graph ${path.basename(info.onnxFile)} has ${layers} layers of cache inputs; the folder mixes two models. Re-export it.`,
    );
  }
  // A cache input is [batch, key/value heads, past length, head size]; fixed sizes must be config.json's.
  const cache = (
    model as { inputMetadata?: readonly { name: string; shape?: readonly (number | string)[] }[] }
  ).inputMetadata?.find((m) => m.name === 'past_key_values.0.key');
  const [, kvHeads, , headDim] = cache?.shape ?? [];
  for (const [key, declared, inGraph] of [
    ['num_key_value_heads', info.numKeyValueHeads, kvHeads],
    ['head_dim', info.headDim, headDim],
  ] as const) {
    if (typeof inGraph === 'number' && inGraph !== declared) {
      void model.release();
      throw new StudioError(
        'MODEL_FOLDER_INCONSISTENT',
        `config.json of ${info.dir} says ${key} ${declared}, but its graph ${path.basename(info.onnxFile)} caches ${inGraph}; the folder mixes two models. Re-export it.`,
      );
    }
  }
}
