import type * as ort from 'onnxruntime-node';
import { StudioError } from '../../base/errors';
import type { BatchLimits } from './batchLimits';
import { decodeFailure } from './batchLimits';
import { forwardInputs, paddedStepInputs } from './forwardInputs';
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
import type { QueuedJob } from './requestScheduler';
import { RequestScheduler } from './requestScheduler';
import type { KvSessionCache } from './sessionCache';
import { releaseDeviceTensors } from './sessionCache';

export type { BatchLimits, BatchStats } from './batchLimits';
export {
  DEFAULT_KV_CACHE_MB,
  DEFAULT_MAX_SEQUENCES,
  batchLimits,
  decodeFailure,
  emptyBatchStats,
  kvBytesPerToken,
} from './batchLimits';

type Feeds = Record<string, ort.Tensor>;
type Outputs = ort.InferenceSession.OnnxValueMapType;

/** The forward passes the scheduler runs: the folder's plain graph and, when it has one, its cascade graph. */
export interface ForwardPasses {
  plain(feeds: Feeds): Promise<Outputs>;
  cascade?: (feeds: Feeds) => Promise<Outputs>;
  /** The plain graph takes `position_ids`: only then can rows of different lengths share a pass. */
  positionIds: boolean;
}

/**
 * How a request decodes. `batch`: its samples are rows of the shared batch (the plain graph with
 * position ids). `cascade`: n samples through the cascade graph, which reads one prompt cache for the
 * whole pass, so rows of other prompts cannot join it; it decodes on its own, step for step beside
 * the shared batch. `alone`: a plain graph without position ids cannot place rows of different
 * lengths, so each request decodes on its own (n samples of one prompt are still one batch).
 */
type JobKind = 'batch' | 'cascade' | 'alone';

interface Job extends QueuedJob {
  kind: JobKind;
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
export class BatchScheduler extends RequestScheduler<Job> {
  private rows: Row[] = [];
  private batchPast: PastTensors | undefined;
  private width = 0;

  constructor(
    info: ModelFolderInfo,
    private readonly forward: ForwardPasses,
    limits: BatchLimits,
    sessions?: KvSessionCache,
  ) {
    super(info, limits, sessions);
  }

  protected createJob(base: QueuedJob): Job {
    const kind: JobKind =
      base.generation.n > 1 && this.forward.cascade
        ? 'cascade'
        : this.forward.positionIds
          ? 'batch'
          : 'alone';
    return { ...base, kind };
  }

  protected reset(): void {
    this.clearBatch();
  }

  protected sharedPrefix(job: Job): boolean {
    return job.kind === 'cascade';
  }

  protected async step(): Promise<void> {
    this.skipCancelledWaiting();
    const joining: Row[] = [];
    await this.admitWaiting((job) => this.prefill(job, joining));
    if (joining.length) await this.rebuildBatch(this.rows, joining);
    if (this.rows.length) await this.stepBatch();
    for (const job of [...this.active]) if (job.alone) await this.stepAlone(job);
  }

  /** Tokens of KV cache the requests in flight (and `extra`) may hold at most. */
  protected reservedTokens(extra?: Job): number {
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

  /** Encodes a request's prompt on its own (reusing its session's cache) and picks its first tokens. */
  private async prefill(job: Job, joining: Row[]): Promise<void> {
    const { info } = this;
    const { req, generation } = job;
    const { n } = generation;
    const prompt = req.promptIds;
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
    this.answer(job);
  }

  protected release(job: Job): void {
    for (const past of [job.prefillPast, job.alone?.past]) if (past) this.releaseUnlessHeld(past);
    job.prefillPast = undefined;
    job.alone = undefined;
  }
}
