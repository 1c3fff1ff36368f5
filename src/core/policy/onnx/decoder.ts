import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ort from 'onnxruntime-node';
import { firstLine } from '../../base/clip';
import { StudioError, errorMessage } from '../../base/errors';
import type { BatchLimits, BatchStats } from './batchScheduler';
import { BatchScheduler, batchLimits } from './batchScheduler';
import type { DeviceAttempt, DeviceProbeListener, DeviceReport, DeviceSetting } from './device';
import { devicesToTry, executionProvider, explainDeviceFailure } from './device';
import type { GenerateRequest, GenerateResult } from './generation';
import type { ModelFolderInfo } from './modelFolder';
import type { KvSessionCache } from './sessionCache';
import { SlotScheduler } from './slotScheduler';

/**
 * How the host keeps the KV cache. `slots`: the folder's slots graph (`model_slots.onnx`) reads each
 * sequence's slot in place and returns only the new tokens' keys and values (slotScheduler.ts), on
 * CPU; `copy`: the main graph takes the past and returns it with the new tokens appended
 * (batchScheduler.ts), the only way for folders without the slots graph and on GPUs.
 */
export type KvCacheMode = 'slots' | 'copy';

/** What the decoder needs of a scheduler: both of them are one. */
interface Scheduler {
  generate(req: GenerateRequest): Promise<GenerateResult>;
  dispose(): Promise<void>;
  readonly stats: BatchStats;
  readonly limits: BatchLimits;
  readonly sessions: KvSessionCache;
}

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

/**
 * Threads of the prefill session: the machine's cores (at most 8), which do not spin between
 * passes, so that the studio's own process and the tool servers keep the cores while the host waits.
 */
export function prefillThreads(): ort.InferenceSession.SessionOptions {
  return {
    intraOpNumThreads: Math.max(1, Math.min(8, os.availableParallelism())),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  };
}

function kvOutputLocations(info: ModelFolderInfo): Record<string, ort.Tensor.DataLocation> {
  const out: Record<string, ort.Tensor.DataLocation> = { logits: 'cpu' };
  for (let i = 0; i < info.numLayers; i++) {
    out[`present.${i}.key`] = 'gpu-buffer';
    out[`present.${i}.value`] = 'gpu-buffer';
  }
  return out;
}

export { forwardInputs } from './forwardInputs';
export type { FinishReason, GenerateRequest, GenerateResult } from './generation';

/**
 * The forward passes of a causal LM in the Hugging Face ONNX layout, on onnxruntime-node, with a
 * decode loop of our own ({@link BatchScheduler}): requests in flight decode together, one forward
 * pass a step for all of them, each keeping its episode's KV cache between turns (only the new suffix
 * of a prompt is encoded); n samples of one prompt share a single prefill. With the folder's cascade
 * graph the n samples read the prompt's cache in place (one copy for all). It works on token ids;
 * text goes through {@link OnnxEngine}.
 */
export class OnnxDecoder {
  private readonly scheduler: Scheduler;

  private constructor(
    readonly info: ModelFolderInfo,
    readonly device: DeviceReport,
    private readonly model: ort.InferenceSession,
    /** The cascade graph, when the folder has one (and the slots graph is not used). */
    private readonly cascade: ort.InferenceSession | undefined,
    /** The slots graph, when it runs the decode loop (the main graph then only prefills). */
    private readonly slots: ort.InferenceSession | undefined,
    limits: BatchLimits,
  ) {
    this.scheduler = slots
      ? new SlotScheduler(
          info,
          {
            decode: (feeds) => slots.run(feeds),
            prefill: (feeds) => model.run(feeds),
          },
          limits,
        )
      : new BatchScheduler(
          info,
          {
            plain: (feeds) => model.run(feeds),
            cascade: cascade ? (feeds) => cascade.run(feeds) : undefined,
            positionIds: model.inputNames.includes('position_ids'),
          },
          limits,
        );
  }

  /** How this decoder keeps the KV cache. */
  get kvCache(): KvCacheMode {
    return this.slots ? 'slots' : 'copy';
  }

  /** Creates the ONNX session on the first device of the setting that works. */
  static async load(
    info: ModelFolderInfo,
    setting: DeviceSetting = 'auto',
    threads?: number,
    options: {
      kvOnDevice?: boolean;
      limits?: BatchLimits;
      onProbe?: DeviceProbeListener;
      /** Absent: `slots` where the folder has the slots graph and the device is the CPU. */
      kvCache?: KvCacheMode;
    } = {},
  ): Promise<OnnxDecoder> {
    const attempts: DeviceAttempt[] = [];
    const main = path.join(info.dir, info.onnxFile);
    let file = main;
    for (const device of devicesToTry(setting)) {
      options.onProbe?.(device, 'begin');
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
        const graphs = await openGraphs(info, device, sessionOptions, {
          threads,
          kvCache: options.kvCache,
          opening: (f) => (file = f),
        });
        const { model } = graphs;
        checkGraphLayers(info, model);
        attempts.push({ device, ok: true });
        return new OnnxDecoder(
          info,
          { device, attempts },
          model,
          graphs.cascade,
          graphs.slots,
          options.limits ?? batchLimits(info),
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
      } finally {
        options.onProbe?.(device, 'end');
      }
    }
    const why = attempts.map((a) => `${a.device}: ${a.reason}`).join('; ');
    throw new StudioError(
      'DEVICE_UNAVAILABLE',
      `Cannot run ${info.dir} on ${setting === 'auto' ? 'any device' : setting}: ${why}. Set rehearsal.policy.device to "cpu" or "auto".`,
    );
  }

  /**
   * Ends an episode's KV cache. With slots it stays a donor of its prefix to later episodes (their
   * system prompt and tools), until room is needed; the copying loop forgets it.
   */
  endSession(key: string): void {
    if (this.slots) this.scheduler.sessions.retire(key);
    else this.scheduler.sessions.end(key);
  }

  /** Generates `n` samples for one prompt, decoded together with the other requests in flight. */
  generate(req: GenerateRequest): Promise<GenerateResult> {
    return this.scheduler.generate(req);
  }

  /** Counters of the decode passes (how many sequences they held). */
  get batchStats(): BatchStats {
    return this.scheduler.stats;
  }

  get limits(): BatchLimits {
    return this.scheduler.limits;
  }

  async dispose(): Promise<void> {
    await this.scheduler.dispose();
    await this.model.release();
    await this.cascade?.release();
    await this.slots?.release();
  }
}

/**
 * The sessions of a folder on one device: the main graph, and the slots graph where it decodes (CPU,
 * a folder that has it, `kvCache` not `copy`), else the cascade graph where there is one. With the
 * slots graph the main graph only prefills prompt chunks, matrix products large enough for every
 * core: a small model's main graph then runs on every core (its decode steps, one token a row, ran
 * fastest on one). `opening` hears each file before it loads (the caller names the one that failed);
 * on a failure what was opened is released.
 */
async function openGraphs(
  info: ModelFolderInfo,
  device: string,
  sessionOptions: ort.InferenceSession.SessionOptions,
  options: { threads?: number; kvCache?: KvCacheMode; opening: (file: string) => void },
): Promise<{
  model: ort.InferenceSession;
  cascade?: ort.InferenceSession;
  slots?: ort.InferenceSession;
}> {
  const open = (file: string, extra: ort.InferenceSession.SessionOptions = {}) => {
    options.opening(file);
    return ort.InferenceSession.create(file, { ...sessionOptions, ...extra });
  };
  // The slots graph reads the cache from host memory in place: on a GPU it would move the whole
  // cache every step, so GPUs keep the main graph (its cache may stay on the device).
  const slotsFile =
    info.slotsFile && device === 'cpu' && (options.kvCache ?? 'slots') === 'slots'
      ? path.join(info.dir, info.slotsFile)
      : undefined;
  const spread = !!slotsFile && sessionOptions.intraOpNumThreads === 1 && !options.threads;
  const model = await open(path.join(info.dir, info.onnxFile), spread ? prefillThreads() : {});
  try {
    // The slot scheduler prefills through the main graph's position ids.
    if (slotsFile && model.inputNames.includes('position_ids'))
      return { model, slots: await open(slotsFile) };
    const cascade = info.cascadeFile
      ? await open(path.join(info.dir, info.cascadeFile))
      : undefined;
    return { model, cascade };
  } catch (err) {
    await model.release();
    throw err;
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
