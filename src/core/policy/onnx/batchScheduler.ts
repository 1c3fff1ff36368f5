import type * as ort from 'onnxruntime-node';
import { firstLine } from '../../base/clip';
import { StudioError, errorMessage } from '../../base/errors';
import { forwardInputs, paddedStepInputs } from './forwardInputs';
import type { GenerateRequest, GenerateResult } from './generation';
import { Generation } from './generation';
import type { PastTensors, RowSource } from './kvCache';
import {
  commonPrefixLength,
  emptyPast,
  gatherRows,
  pastAsPrefix,
  presentsAsPast,
  tilePast,
  truncatePast,
} from './kvCache';
import type { ModelFolderInfo } from './modelFolder';
import { KvSessionCache, releaseDeviceTensors } from './sessionCache';

type Feeds = Record<string, ort.Tensor>;
type Outputs = ort.InferenceSession.OnnxValueMapType;

/** The forward passes the scheduler runs: the folder's plain graph and, when it has one, its cascade graph. */
export interface ForwardPasses {
  plain(feeds: Feeds): Promise<Outputs>;
  cascade?: (feeds: Feeds) => Promise<Outputs>;
  /** The plain graph takes `position_ids`: only then can rows of different lengths share a pass. */
  positionIds: boolean;
}

/** Bounds on what decodes at once, and on the KV cache the host holds. */
export interface BatchLimits {
  /** Most sequences (samples of every request in flight) decoding at once. */
  maxSequences: number;
  /**
   * Most tokens of KV cache: what requests in flight may grow to (prompt plus max tokens a row, the
   * shared batch's left padding included) plus the idle sessions' caches.
   */
  maxCachedTokens: number;
}

/** Default bound on the sequences decoding at once. */
export const DEFAULT_MAX_SEQUENCES = 64;
/** Default bound on the KV cache, in MiB (1 GiB: 512k tokens of the default policy). */
export const DEFAULT_KV_CACHE_MB = 1024;

/** Bytes of keys and values one cached token takes (float32, every layer). */
export function kvBytesPerToken(info: ModelFolderInfo): number {
  return info.numLayers * 2 * info.numKeyValueHeads * info.headDim * 4;
}

/** The limits for a model: `kvCacheMb` of cache in tokens of this model, and `maxSequences`. */
export function batchLimits(
  info: ModelFolderInfo,
  kvCacheMb = DEFAULT_KV_CACHE_MB,
  maxSequences = DEFAULT_MAX_SEQUENCES,
): BatchLimits {
  return {
    maxSequences,
    maxCachedTokens: Math.floor((kvCacheMb * 1024 * 1024) / kvBytesPerToken(info)),
  };
}

/** Counters of the decode passes since the scheduler started. */
export interface BatchStats {
  /** Forward passes after prefills (a pass that decodes several requests counts once). */
  decodePasses: number;
  /** Sequences summed over those passes (decodeRows / decodePasses is the mean batch). */
  decodeRows: number;
  /** The most sequences one pass decoded. */
  largestBatch: number;
  /** Prefill passes (a chunk of one prompt, or of several in one pass, counts once). */
  prefillPasses: number;
  /** Prompt tokens those passes encoded. */
  prefillTokens: number;
  /** Time inside the graph's forward passes: prefills, and decode passes. */
  prefillForwardMs: number;
  decodeForwardMs: number;
}

/** Counters at zero. */
export function emptyBatchStats(): BatchStats {
  return {
    decodePasses: 0,
    decodeRows: 0,
    largestBatch: 0,
    prefillPasses: 0,
    prefillTokens: 0,
    prefillForwardMs: 0,
    decodeForwardMs: 0,
  };
}

/**
 * How a request decodes. `batch`: its samples are rows of the shared batch (the plain graph with
 * position ids). `cascade`: n samples through the cascade graph, which reads one prompt cache for the
 * whole pass, so rows of other prompts cannot join it; it decodes on its own, step for step beside
 * the shared batch. `alone`: a plain graph without position ids cannot place rows of different
 * lengths, so each request decodes on its own (n samples of one prompt are still one batch).
 */
type JobKind = 'batch' | 'cascade' | 'alone';

interface Job {
  req: GenerateRequest;
  generation: Generation;
  kind: JobKind;
  /** How wide a row of it may grow: the prompt and every new token. */
  width: number;
  enqueuedAt: number;
  resolve: (result: GenerateResult) => void;
  reject: (err: unknown) => void;
  queuedMs: number;
  reused: number;
  prefillMs: number;
  decodeStart: number;
  decodeSteps: number;
  batchRows: number;
  /** The prompt's cache (an n > 1 request keeps it as its session). */
  prefillPast?: PastTensors;
  /** The state of a request that decodes on its own. */
  alone?: { past: PastTensors; prefix?: PastTensors; length: number; tokens: number[] };
}

/** One sequence of the shared batch: a sample of a request. */
interface Row {
  job: Job;
  sample: number;
  /** Its cached tokens (right-aligned in the batch cache). */
  length: number;
  /** The token it feeds next. */
  token: number;
  /** Where its cache comes from while it joins. */
  source?: RowSource;
}

/**
 * Continuous batching across requests. Requests queue; each step admits those that fit the limits
 * (each prefills on its own, then joins), runs ONE forward pass for every row of the shared batch,
 * picks each row's token with its own request's sampler, and lets finished rows leave. Rows of
 * different lengths share the pass: the batch cache is as wide as the longest row, shorter rows are
 * padded on the left, the attention mask is 0 over the padding and each row's position ids continue
 * its own sequence, so a row computes what it would alone. The cache is rebuilt (copied) only when
 * rows join or leave, trimmed to the longest remaining row; between those steps the graph's present
 * outputs are the next step's past. Every request keeps its own session cache for prefix reuse.
 */
export class BatchScheduler {
  private readonly queue: Job[] = [];
  private readonly active = new Set<Job>();
  private rows: Row[] = [];
  private batchPast: PastTensors | undefined;
  private width = 0;
  private running: Promise<void> | undefined;
  private disposed = false;
  private readonly counters: BatchStats = emptyBatchStats();

  constructor(
    private readonly info: ModelFolderInfo,
    private readonly forward: ForwardPasses,
    readonly limits: BatchLimits,
    readonly sessions = new KvSessionCache(),
  ) {}

  get stats(): BatchStats {
    return { ...this.counters };
  }

  /** Queues a request; resolves when its last sample ends. Requests the model cannot take fail at once, alone. */
  generate(req: GenerateRequest): Promise<GenerateResult> {
    const { info } = this;
    const prompt = req.promptIds;
    if (this.disposed)
      return Promise.reject(
        new StudioError('POLICY_NOT_LOADED', 'The model was unloaded; initialize it again.'),
      );
    if (prompt.length === 0)
      return Promise.reject(new StudioError('EMPTY_PROMPT', 'The prompt is empty.'));
    if (prompt.length + req.maxTokens > info.maxPositions)
      return Promise.reject(
        new StudioError(
          'PROMPT_TOO_LONG',
          `The prompt has ${prompt.length} tokens; with ${req.maxTokens} new tokens it exceeds the model's ${info.maxPositions} positions. Shorten the task or lower max tokens.`,
        ),
      );
    const n = Math.max(1, req.n);
    const kind: JobKind =
      n > 1 && this.forward.cascade ? 'cascade' : this.forward.positionIds ? 'batch' : 'alone';
    return new Promise<GenerateResult>((resolve, reject) => {
      this.queue.push({
        req,
        generation: new Generation(req, n, info.eosTokenIds),
        kind,
        width: prompt.length + req.maxTokens,
        enqueuedAt: performance.now(),
        resolve,
        reject,
        queuedMs: 0,
        reused: 0,
        prefillMs: 0,
        decodeStart: 0,
        decodeSteps: 0,
        batchRows: 0,
      });
      this.wake();
    });
  }

  /** Fails what waits or decodes, after the step in progress. */
  async dispose(): Promise<void> {
    this.disposed = true;
    await this.running;
    const unloaded = new StudioError(
      'POLICY_NOT_LOADED',
      'The model was unloaded while this request waited or decoded; initialize it again.',
    );
    for (const job of [...this.queue.splice(0), ...this.active]) this.fail(job, unloaded);
    this.clearBatch();
    this.sessions.clear();
  }

  private wake(): void {
    this.running ??= this.loop().finally(() => {
      this.running = undefined;
      if (this.queue.length && !this.disposed) this.wake();
    });
  }

  private async loop(): Promise<void> {
    while (!this.disposed && (this.queue.length || this.active.size)) {
      try {
        await this.step();
      } catch (err) {
        // Not an onnxruntime failure (those fail their own requests): fail everything rather than hang.
        for (const job of [...this.queue.splice(0), ...this.active]) this.fail(job, err);
        this.clearBatch();
      }
    }
  }

  private async step(): Promise<void> {
    this.skipCancelledWaiting();
    const joining: Row[] = [];
    while (this.queue.length && this.admissible(this.queue[0])) {
      const job = this.queue.shift()!;
      this.active.add(job);
      await this.prefill(job, joining);
    }
    if (joining.length) await this.rebuildBatch(this.rows, joining);
    if (this.rows.length) await this.stepBatch();
    for (const job of [...this.active]) if (job.alone) await this.stepAlone(job);
  }

  /** Requests cancelled while they waited end at once, with no tokens and nothing prefilled. */
  private skipCancelledWaiting(): void {
    for (const job of this.queue.filter((j) => j.req.signal?.aborted)) {
      this.queue.splice(this.queue.indexOf(job), 1);
      job.generation.cancelIfAborted();
      job.resolve(this.result(job, performance.now() - job.enqueuedAt));
    }
  }

  /** Tokens of KV cache the requests in flight (and `extra`) may hold at most. */
  private reservedTokens(extra?: Job): number {
    let batchRows = 0;
    let batchWidth = 0;
    let other = 0;
    for (const job of extra ? [...this.active, extra] : this.active) {
      const { n } = job.generation;
      const prompt = job.req.promptIds.length;
      if (job.kind === 'batch') {
        batchRows += n;
        batchWidth = Math.max(batchWidth, job.width);
        if (n > 1) other += prompt; // the prompt's cache, kept for the session
      } else if (job.kind === 'cascade') other += prompt + n * job.req.maxTokens;
      else other += n * job.width;
    }
    return batchRows * batchWidth + other;
  }

  private sequencesInFlight(): number {
    let n = 0;
    for (const job of this.active) n += job.generation.n;
    return n;
  }

  /**
   * Whether a request may start now: idle sessions are evicted (least recently used first) to make
   * room. Its own session's cache is not counted: it takes it out, and its own reservation covers it.
   */
  private admissible(job: Job): boolean {
    const { maxSequences, maxCachedTokens } = this.limits;
    const own = job.req.session;
    const needed = this.reservedTokens(job);
    const idle = () => this.sessions.tokens - this.sessions.tokensOf(own);
    while (needed + idle() > maxCachedTokens && this.sessions.evictLeastRecent(own));
    // A request alone always runs: its own size was checked against the model.
    if (this.active.size === 0) return true;
    return (
      this.sequencesInFlight() + job.generation.n <= maxSequences &&
      needed + idle() <= maxCachedTokens
    );
  }

  private trimSessions(): void {
    const reserved = this.reservedTokens();
    while (
      reserved + this.sessions.tokens > this.limits.maxCachedTokens &&
      this.sessions.evictLeastRecent()
    );
  }

  /** Encodes a request's prompt on its own (reusing its session's cache) and picks its first tokens. */
  private async prefill(job: Job, joining: Row[]): Promise<void> {
    const { info } = this;
    const { req, generation } = job;
    const { n } = generation;
    const prompt = req.promptIds;
    job.queuedMs = performance.now() - job.enqueuedAt;
    // Reuse the longest cached prefix; at least one prompt token must be fed to get logits.
    const cached = req.session ? this.sessions.take(req.session) : undefined;
    const reused = cached ? Math.min(commonPrefixLength(cached.ids, prompt), prompt.length - 1) : 0;
    const past =
      cached && reused > 0
        ? await truncatePast(cached.past, reused)
        : emptyPast(info.numLayers, info.numKeyValueHeads, info.headDim, 1);
    const t0 = performance.now();
    let outputs: Outputs;
    try {
      outputs = await this.forward.plain(
        forwardInputs(prompt.slice(reused), reused, 1, past, {
          positionIds: this.forward.positionIds,
        }),
      );
    } catch (err) {
      return this.fail(job, decodeFailure(err, 'the prefill of this request'));
    } finally {
      // The outputs are new tensors: the session's old cache is spent either way.
      const spent = new Set([...Object.values(past), ...Object.values(cached?.past ?? {})]);
      releaseDeviceTensors(Object.fromEntries([...spent].map((t, i) => [i, t])));
    }
    job.prefillMs = performance.now() - t0;
    this.counters.prefillPasses++;
    this.counters.prefillTokens += prompt.length - reused;
    this.counters.prefillForwardMs += job.prefillMs;
    job.reused = reused;
    const logits = outputs['logits'] as ort.Tensor;
    const V = info.vocabSize;
    if (logits.dims[logits.dims.length - 1] !== V) {
      return this.fail(
        job,
        new StudioError(
          'MODEL_FOLDER_INCONSISTENT',
          `config.json of ${info.dir} says vocab_size ${V}, but its graph gives ${logits.dims[logits.dims.length - 1]} logits a token; the folder mixes two models. Re-export it.`,
        ),
      );
    }
    const prefillPast = presentsAsPast(outputs, info.numLayers);
    job.prefillPast = prefillPast;
    // Every sample reads the prefill's last position.
    const data = logits.data as Float32Array;
    const offset = (prompt.length - reused - 1) * V;
    const tokens = Array.from({ length: n }, (_, i) => generation.pick(i, data, offset, V));
    generation.cancelIfAborted();
    job.decodeStart = performance.now();
    if (generation.finished) return this.finish(job, prefillPast);
    if (job.kind === 'batch') {
      for (let i = 0; i < n; i++) {
        if (generation.isFinished(i)) continue;
        joining.push({
          job,
          sample: i,
          length: prompt.length,
          token: tokens[i],
          source: { past: prefillPast, row: 0, start: 0, length: prompt.length },
        });
      }
    } else if (job.kind === 'cascade') {
      job.alone = {
        prefix: pastAsPrefix(prefillPast),
        past: emptyPast(info.numLayers, info.numKeyValueHeads, info.headDim, n),
        length: prompt.length,
        tokens,
      };
    } else {
      job.alone = { past: await tilePast(prefillPast, n), length: prompt.length, tokens };
    }
  }

  /** Rebuilds the batch cache from the rows that stay and those that join, as wide as the longest. */
  private async rebuildBatch(keep: Row[], joining: Row[]): Promise<void> {
    const rows = [...keep, ...joining];
    if (rows.length === 0) return this.clearBatch();
    const width = Math.max(...rows.map((r) => r.length));
    const old = this.batchPast;
    const sources = rows.map(
      (r): RowSource =>
        r.source ?? {
          past: old!,
          row: this.rows.indexOf(r),
          start: this.width - r.length,
          length: r.length,
        },
    );
    this.batchPast = await gatherRows(sources, width);
    for (const r of joining) r.source = undefined;
    this.rows = rows;
    this.width = width;
    if (old) this.releaseUnlessHeld(old);
  }

  private clearBatch(): void {
    const old = this.batchPast;
    this.rows = [];
    this.batchPast = undefined;
    this.width = 0;
    if (old) this.releaseUnlessHeld(old);
  }

  /** Releases a replaced cache unless it is the batch's or a request still holds it as its prompt's cache. */
  private releaseUnlessHeld(past: PastTensors): void {
    if (past === this.batchPast || this.sessions.holds(past)) return;
    for (const job of this.active) if (job.prefillPast === past || job.alone?.past === past) return;
    releaseDeviceTensors(past);
  }

  private count(sequences: number, t0: number): void {
    this.counters.decodeForwardMs += performance.now() - t0;
    this.counters.decodePasses++;
    this.counters.decodeRows += sequences;
    this.counters.largestBatch = Math.max(this.counters.largestBatch, sequences);
  }

  /** One forward pass of every row of the shared batch; finished rows leave it. */
  private async stepBatch(): Promise<void> {
    const { info } = this;
    const rows = this.rows;
    const jobs = new Set(rows.map((r) => r.job));
    const t0 = performance.now();
    let outputs: Outputs;
    try {
      outputs = await this.forward.plain(
        paddedStepInputs(
          rows.map((r) => r.token),
          rows.map((r) => r.length),
          this.width,
          this.batchPast!,
        ),
      );
    } catch (err) {
      // One pass computes every row: when it fails, each request in it fails with it.
      const error = decodeFailure(
        err,
        `a decode step of ${rows.length} sequences from ${jobs.size} requests`,
      );
      this.clearBatch();
      for (const job of jobs) this.fail(job, error);
      return;
    }
    this.count(rows.length, t0);
    const previous = this.batchPast!;
    this.batchPast = presentsAsPast(outputs, info.numLayers);
    this.width++;
    this.releaseUnlessHeld(previous);
    const data = (outputs['logits'] as ort.Tensor).data as Float32Array;
    const V = info.vocabSize;
    rows.forEach((row, r) => {
      row.length++;
      row.token = row.job.generation.pick(row.sample, data, r * V, V);
    });
    for (const job of jobs) {
      job.decodeSteps++;
      job.batchRows = Math.max(job.batchRows, rows.length);
      job.generation.cancelIfAborted();
    }
    const keep = rows.filter((r) => !r.job.generation.isFinished(r.sample));
    if (keep.length === rows.length) return;
    // A request of one sample that ended takes its row's cache (prompt and tokens) for its session.
    const ended = [...jobs].filter((j) => j.generation.finished);
    const caches = new Map<Job, PastTensors>();
    for (const job of ended) {
      if (!job.req.session || job.generation.n !== 1) continue;
      const r = rows.findIndex((x) => x.job === job);
      const { length } = rows[r];
      caches.set(
        job,
        await gatherRows(
          [{ past: this.batchPast, row: r, start: this.width - length, length }],
          length,
        ),
      );
    }
    // Sessions first: a cache cut out of the batch may be the batch's own tensors, kept from release.
    for (const job of ended) this.finish(job, caches.get(job));
    await this.rebuildBatch(keep, []);
  }

  /** One forward pass of a request that decodes on its own (cascade, or a graph without positions). */
  private async stepAlone(job: Job): Promise<void> {
    const { info } = this;
    const state = job.alone!;
    const { generation } = job;
    const { n } = generation;
    const run = state.prefix ? this.forward.cascade! : (f: Feeds) => this.forward.plain(f);
    const t0 = performance.now();
    let outputs: Outputs;
    try {
      outputs = await run(
        forwardInputs(state.tokens, state.length, n, state.past, {
          positionIds: this.forward.positionIds,
          prefix: state.prefix,
        }),
      );
    } catch (err) {
      return this.fail(job, decodeFailure(err, `a decode step of this request's ${n} samples`));
    }
    this.count(n, t0);
    state.length++;
    const previous = state.past;
    state.past = presentsAsPast(outputs, info.numLayers);
    if (previous !== job.prefillPast) releaseDeviceTensors(previous);
    const data = (outputs['logits'] as ort.Tensor).data as Float32Array;
    const V = info.vocabSize;
    for (let i = 0; i < n; i++)
      state.tokens[i] = generation.isFinished(i)
        ? info.padTokenId
        : generation.pick(i, data, i * V, V);
    job.decodeSteps++;
    job.batchRows = Math.max(job.batchRows, n);
    generation.cancelIfAborted();
    // n = 1: the cache covers the prompt and every generated token but the last one.
    if (generation.finished) this.finish(job, n === 1 ? state.past : undefined);
  }

  /** Keeps the session's cache (n = 1: `last`, prompt and tokens; n > 1: the prompt's) and answers. */
  private finish(job: Job, last: PastTensors | undefined): void {
    this.active.delete(job);
    const { req, generation } = job;
    const prompt = req.promptIds;
    const kept = req.session ? (generation.n === 1 ? last : job.prefillPast) : undefined;
    if (req.session && kept) {
      const ids =
        generation.n === 1 ? prompt.concat(generation.samples[0].ids.slice(0, -1)) : prompt;
      this.sessions.put(req.session, { ids, past: kept });
    }
    for (const past of new Set([job.prefillPast, job.alone?.past, last]))
      if (past && past !== kept) this.releaseUnlessHeld(past);
    job.prefillPast = undefined;
    job.alone = undefined;
    this.trimSessions();
    job.resolve(this.result(job, job.queuedMs));
  }

  private result(job: Job, queuedMs: number): GenerateResult {
    const prompt = job.req.promptIds.length;
    const started = job.decodeStart > 0;
    return {
      samples: job.generation.results(),
      promptTokens: prompt,
      prefilled: started ? prompt - job.reused : 0,
      reused: job.reused,
      prefillMs: job.prefillMs,
      decodeMs: started ? performance.now() - job.decodeStart : 0,
      decodeSteps: job.decodeSteps,
      sharedPrefix: job.kind === 'cascade',
      batchRows: job.batchRows,
      queuedMs,
    };
  }

  private fail(job: Job, err: unknown): void {
    this.active.delete(job);
    for (const past of [job.prefillPast, job.alone?.past]) if (past) this.releaseUnlessHeld(past);
    job.prefillPast = undefined;
    job.alone = undefined;
    job.reject(err);
  }
}

/** An onnxruntime failure as the coded error of every request it ends. */
export function decodeFailure(err: unknown, what: string): StudioError {
  if (err instanceof StudioError) return err;
  return new StudioError(
    'POLICY_DECODE_FAILED',
    `onnxruntime failed in ${what} (${firstLine(errorMessage(err))}); the requests it held failed, others go on. Retry; if it recurs, run fewer episodes at once or use a smaller model.`,
  );
}
