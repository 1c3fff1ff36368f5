import { StudioError } from '../../base/errors';
import type { BatchLimits, BatchStats } from './batchLimits';
import { emptyBatchStats } from './batchLimits';
import type { GenerateRequest, GenerateResult } from './generation';
import { Generation } from './generation';
import type { ModelFolderInfo } from './modelFolder';
import { KvSessionCache } from './sessionCache';

/** What every scheduled request carries, whichever scheduler decodes it. */
export interface QueuedJob {
  req: GenerateRequest;
  generation: Generation;
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
}

/**
 * The queue both decode loops share (batchScheduler.ts copies the KV cache, slotScheduler.ts keeps it
 * in place): requests the model cannot take fail at once and alone; the others wait until they fit
 * the limits (idle sessions evicted least recently used first to make room), and one loop runs
 * `step` while any waits or decodes. A step that throws something other than an onnxruntime failure
 * (those fail their own requests) fails everything rather than hang.
 */
export abstract class RequestScheduler<J extends QueuedJob> {
  protected readonly queue: J[] = [];
  protected readonly active = new Set<J>();
  protected readonly counters: BatchStats = emptyBatchStats();
  private running: Promise<void> | undefined;
  private disposed = false;

  constructor(
    protected readonly info: ModelFolderInfo,
    readonly limits: BatchLimits,
    readonly sessions = new KvSessionCache(),
  ) {}

  get stats(): BatchStats {
    return { ...this.counters };
  }

  /** One round of the loop: admit what fits, prefill, one decode pass. */
  protected abstract step(): Promise<void>;
  /** The scheduler's own fields of a new request's job. */
  protected abstract createJob(base: QueuedJob): J;
  /** Tokens of KV cache the requests in flight (and `extra`) may hold at most. */
  protected abstract reservedTokens(extra?: J): number;
  /** Frees what a request holds (its rows, its caches) when it ends or fails. */
  protected abstract release(job: J): void;
  /** Drops the batch state once every request failed or the model was unloaded. */
  protected abstract reset(): void;
  /** Whether the request's samples read one shared copy of the prompt's cache. */
  protected abstract sharedPrefix(job: J): boolean;

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
    return new Promise<GenerateResult>((resolve, reject) => {
      this.queue.push(
        this.createJob({
          req,
          generation: new Generation(req, n, info.eosTokenIds),
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
        }),
      );
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
    this.reset();
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
        for (const job of [...this.queue.splice(0), ...this.active]) this.fail(job, err);
        this.reset();
      }
    }
  }

  /** Requests cancelled while they waited end at once, with no tokens and nothing prefilled. */
  protected skipCancelledWaiting(): void {
    for (const job of this.queue.filter((j) => j.req.signal?.aborted)) {
      this.queue.splice(this.queue.indexOf(job), 1);
      job.generation.cancelIfAborted();
      job.resolve(this.result(job, performance.now() - job.enqueuedAt));
    }
  }

  /** Admits the waiting requests that fit, in order, each through `start`. */
  protected async admitWaiting(start: (job: J) => Promise<void> | void): Promise<void> {
    while (this.queue.length && this.admissible(this.queue[0])) {
      const job = this.queue.shift()!;
      job.queuedMs = performance.now() - job.enqueuedAt;
      this.active.add(job);
      await start(job);
    }
  }

  /**
   * Whether a request may start now: idle sessions are evicted (least recently used first) to make
   * room. Its own session's cache is not counted: it takes it out, and its own reservation covers it.
   */
  private admissible(job: J): boolean {
    const { maxSequences, maxCachedTokens } = this.limits;
    const own = job.req.session;
    const needed = this.reservedTokens(job);
    const idle = () => this.sessions.tokens - this.sessions.tokensOf(own);
    while (needed + idle() > maxCachedTokens && this.sessions.evictLeastRecent(own));
    // A request alone always runs: its own size was checked against the model.
    if (this.active.size === 0) return true;
    let sequences = 0;
    for (const j of this.active) sequences += j.generation.n;
    return sequences + job.generation.n <= maxSequences && needed + idle() <= maxCachedTokens;
  }

  /** Evicts idle sessions until they and the requests in flight fit the KV bound. */
  protected trimSessions(): void {
    const reserved = this.reservedTokens();
    while (
      reserved + this.sessions.tokens > this.limits.maxCachedTokens &&
      this.sessions.evictLeastRecent()
    );
  }

  /** Ends a request with its samples (after `release`, by the caller). */
  protected answer(job: J): void {
    this.active.delete(job);
    this.trimSessions();
    job.resolve(this.result(job, job.queuedMs));
  }

  protected fail(job: J, err: unknown): void {
    this.active.delete(job);
    this.release(job);
    job.reject(err);
  }

  private result(job: J, queuedMs: number): GenerateResult {
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
      sharedPrefix: this.sharedPrefix(job),
      batchRows: job.batchRows,
      queuedMs,
    };
  }
}
