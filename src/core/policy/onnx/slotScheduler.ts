import * as ort from 'onnxruntime-node';
import { StudioError } from '../../base/errors';
import type { BatchLimits } from './batchLimits';
import { decodeFailure } from './batchLimits';
import { forwardInputs } from './forwardInputs';
import type { PastTensors } from './kvCache';
import { commonPrefixLength, emptyPast } from './kvCache';
import type { ModelFolderInfo } from './modelFolder';
import type { QueuedJob } from './requestScheduler';
import { RequestScheduler } from './requestScheduler';
import type { KvSessionCache } from './sessionCache';
import { SlotCache } from './slotCache';

type Feeds = Record<string, ort.Tensor>;
type Outputs = ort.InferenceSession.OnnxValueMapType;

/**
 * The two graphs of the slot scheduler. `decode`: the slots graph, one token a row, the cache read in
 * place. `prefill`: the main graph (with position ids), one prompt chunk after its compact past: it
 * encodes a chunk 1.5-2x faster than the slots graph (no bias over the slot's unused positions, no
 * concatenated scores), and its one copy of the past is nothing beside a chunk's compute.
 */
export interface SlotPasses {
  decode(feeds: Feeds): Promise<Outputs>;
  prefill(feeds: Feeds): Promise<Outputs>;
}

/** Most prompt tokens one prefill pass encodes (a longer prompt is prefilled in chunks). */
export const PREFILL_CHUNK = 512;
/** Most prompt tokens prefilled between two decode passes, so that rows decoding keep going. */
export const PREFILL_BUDGET = 1024;
/**
 * The additive bias of a key a query must not see: onnxruntime's own mask value. Its exponential is
 * 0 in float32 as float32's lowest is, and the softmax runs a third faster than over that.
 */
const HIDDEN = -1e4;

const int64 = (values: ArrayLike<number>, dims: number[]) =>
  new ort.Tensor(
    'int64',
    BigInt64Array.from(values as number[], (x) => BigInt(x)),
    dims,
  );

/**
 * Inputs of one pass of the slots graph over `chunks.length` contiguous rows: row b feeds
 * `chunks[b]` after its `lengths[b]` cached tokens (right-padded to the longest chunk). The bias
 * lets each real token see its row's cached positions and the chunk's tokens up to itself; logits are
 * read at each row's last real token.
 */
export function slotInputs(
  chunks: readonly (readonly number[])[],
  lengths: readonly number[],
  slotLength: number,
  past: PastTensors,
): Feeds {
  const batch = chunks.length;
  const seq = Math.max(...chunks.map((c) => c.length));
  const keys = slotLength + seq;
  const ids = new Array<number>(batch * seq).fill(0);
  const positions = new Array<number>(batch * seq);
  const bias = new Float32Array(batch * seq * keys).fill(HIDDEN);
  const rows = new Array<number>(batch);
  for (let b = 0; b < batch; b++) {
    const chunk = chunks[b];
    const length = lengths[b];
    for (let j = 0; j < seq; j++) {
      const real = Math.min(j, chunk.length - 1);
      if (j < chunk.length) ids[b * seq + j] = chunk[j];
      positions[b * seq + j] = length + real;
      const at = (b * seq + j) * keys;
      bias.fill(0, at, at + length);
      bias.fill(0, at + slotLength, at + slotLength + real + 1);
    }
    rows[b] = b * seq + chunk.length - 1;
  }
  return {
    input_ids: int64(ids, [batch, seq]),
    position_ids: int64(positions, [batch, seq]),
    attention_bias: new ort.Tensor('float32', bias, [batch, seq, keys]),
    logits_rows: int64(rows, [batch]),
    ...past,
  };
}

interface Job extends QueuedJob {
  /** Prompt tokens not yet in the cache. */
  pending: number[];
}

/** A row of the slot cache: a sample of a request (sample 0's row prefills the prompt). */
interface Row {
  job: Job;
  sample: number;
  /** The token it feeds next (decoding rows). */
  token: number;
}

/**
 * Continuous batching over the slots graph (`model_slots.onnx`), whose KV cache stays in place: a
 * row (slot) of {@link SlotCache} per sequence. Rows `[0, ready)` decode, one pass a step for all of
 * them, each at its own length (no padding to the longest row: the bias hides what a row has not
 * written); rows after them prefill their prompts in chunks of {@link PREFILL_CHUNK} tokens, at most
 * {@link PREFILL_BUDGET} tokens between two decode passes, each into its own slot. A request whose
 * prompt is in joins the decoding rows (its n samples copy the prompt's slot once); a finished row's
 * slot takes the last row. An episode's session keeps a compact copy of its cache between turns, so
 * the next prompt prefills only its new suffix; a prefix that another sequence holds (a row in
 * flight, an ended episode's cache) is copied rather than prefilled ({@link borrowPrefix}).
 */
export class SlotScheduler extends RequestScheduler<Job> {
  private readonly cache: SlotCache;
  private rows: Row[] = [];
  /** Rows `[0, ready)` decode; the rest prefill. */
  private ready = 0;

  constructor(
    info: ModelFolderInfo,
    private readonly forward: SlotPasses,
    limits: BatchLimits,
    sessions?: KvSessionCache,
  ) {
    super(info, limits, sessions);
    this.cache = new SlotCache(info.numLayers, info.numKeyValueHeads, info.headDim);
  }

  protected createJob(base: QueuedJob): Job {
    return { ...base, pending: [] };
  }

  protected reset(): void {
    this.cache.clear();
    this.rows = [];
    this.ready = 0;
  }

  protected sharedPrefix(): boolean {
    return false;
  }

  protected async step(): Promise<void> {
    this.skipCancelledWaiting();
    await this.admitWaiting((job) => this.admit(job));
    await this.prefill();
    if (this.ready > 0) await this.decode();
    this.cache.fit(this.cache.longest() + 1);
  }

  /** Tokens of KV cache the requests in flight (and `extra`) may hold at most: every slot is as long as the longest. */
  protected reservedTokens(extra?: Job): number {
    let rows = 0;
    let width = 0;
    for (const job of extra ? [...this.active, extra] : this.active) {
      rows += job.generation.n;
      width = Math.max(width, job.width);
    }
    return rows * width;
  }

  /** Takes a slot for the request's prompt, with its session's cached prefix copied in. */
  private admit(job: Job): void {
    const prompt = job.req.promptIds;
    const cached = job.req.session ? this.sessions.take(job.req.session) : undefined;
    // At least one prompt token is fed, to get the logits of the last one.
    const reused = cached ? Math.min(commonPrefixLength(cached.ids, prompt), prompt.length - 1) : 0;
    const row = this.cache.append();
    this.rows.push({ job, sample: 0, token: 0 });
    if (reused > 0) this.cache.copyIn(row, cached!.past, reused);
    job.reused = reused;
    job.pending = prompt.slice(reused);
  }

  private rowOf(job: Job): number {
    return this.rows.findIndex((r) => r.job === job);
  }

  /** Prefill passes, one request each, until the budget is spent (at least one when any waits). */
  private async prefill(): Promise<void> {
    const { info } = this;
    let budget = PREFILL_BUDGET;
    const waiting = this.rows.slice(this.ready).map((r) => r.job);
    for (const job of waiting) {
      if (budget <= 0) break;
      if (!this.active.has(job)) continue;
      if (job.req.signal?.aborted) {
        job.generation.cancelIfAborted();
        this.finish(job);
        continue;
      }
      const row = this.rowOf(job);
      if (job.pending.length === job.req.promptIds.length - job.reused) this.borrowPrefix(job, row);
      const length = this.cache.lengthOf(row);
      const chunk = job.pending.slice(0, PREFILL_CHUNK);
      budget -= chunk.length;
      this.cache.reserve(this.cache.rows, length + chunk.length);
      const past =
        length > 0
          ? this.cache.copyOut(row, length)
          : emptyPast(info.numLayers, info.numKeyValueHeads, info.headDim, 1);
      const t0 = performance.now();
      let outputs: Outputs;
      try {
        outputs = await this.forward.prefill(
          forwardInputs(chunk, length, 1, past, { positionIds: true }),
        );
      } catch (err) {
        this.fail(job, decodeFailure(err, 'the prefill of this request'));
        continue;
      }
      const ms = performance.now() - t0;
      job.prefillMs += ms;
      this.counters.prefillPasses++;
      this.counters.prefillTokens += chunk.length;
      this.counters.prefillForwardMs += ms;
      const logits = outputs['logits'] as ort.Tensor;
      if (logits.dims[logits.dims.length - 1] !== info.vocabSize) {
        this.fail(
          job,
          new StudioError(
            'MODEL_FOLDER_INCONSISTENT',
            `config.json of ${info.dir} says vocab_size ${info.vocabSize}, but its graph gives ${logits.dims[logits.dims.length - 1]} logits a token; the folder mixes two models. Re-export it.`,
          ),
        );
        continue;
      }
      this.cache.writePresent(outputs, row, length, chunk.length);
      job.pending = job.pending.slice(chunk.length);
      // The chunk's last position: the logits of the prompt's last token once it is all in.
      if (job.pending.length === 0)
        this.start(job, logits.data as Float32Array, (chunk.length - 1) * info.vocabSize);
    }
  }

  /**
   * Before a request's first prefill: where another sequence's cache holds a longer prefix of its
   * prompt than its own session's (the system prompt and tools every episode of a task set starts
   * with), that prefix is copied into its slot instead of computed again: from an idle session's
   * cache, or from a row whose prompt is (partly) in, of a request in flight. The keys and values of
   * a token depend only on the tokens before it, so the copy is what the prefill would compute
   * (vLLM's automatic prefix caching, by copy).
   */
  private borrowPrefix(job: Job, row: number): void {
    const prompt = job.req.promptIds;
    // At least one prompt token is fed, to get the logits of the last one.
    const limit = prompt.length - 1;
    let best = job.reused;
    let from: (() => void) | undefined;
    const idle = this.sessions.longestPrefix(prompt);
    if (idle && Math.min(idle.length, limit) > best) {
      best = Math.min(idle.length, limit);
      const { past } = idle.session;
      from = () => this.cache.copyIn(row, past, best);
    }
    this.rows.forEach((other, r) => {
      if (r === row || other.job === job) return;
      const theirs = other.job.req.promptIds;
      const length = Math.min(commonPrefixLength(theirs, prompt), this.cache.lengthOf(r), limit);
      if (length > best) {
        best = length;
        from = () => this.cache.copyRow(r, row, best);
      }
    });
    if (!from) return;
    from();
    job.pending = prompt.slice(best);
    job.reused = best;
  }

  /** A request whose prompt is in: picks its first tokens and moves its samples to the decoding rows. */
  private start(job: Job, logits: Float32Array, offset: number): void {
    const { generation } = job;
    const V = this.info.vocabSize;
    const tokens = Array.from({ length: generation.n }, (_, i) =>
      generation.pick(i, logits, offset, V),
    );
    generation.cancelIfAborted();
    job.decodeStart = performance.now();
    if (generation.finished) return this.finish(job);
    let prompt = -1;
    for (let i = 0; i < generation.n; i++) {
      if (generation.isFinished(i)) continue;
      if (prompt < 0) {
        // The prompt's own row decodes its first running sample.
        prompt = this.promote(this.rowOf(job));
        this.rows[prompt] = { job, sample: i, token: tokens[i] };
        continue;
      }
      const row = this.cache.append();
      this.cache.copyRow(prompt, row, job.req.promptIds.length);
      this.rows.push({ job, sample: i, token: tokens[i] });
      this.promote(row);
    }
  }

  /** Moves a prefilling row to the end of the decoding rows; returns where it is now. */
  private promote(row: number): number {
    const to = this.ready;
    if (row !== to) {
      this.cache.swap(row, to);
      [this.rows[row], this.rows[to]] = [this.rows[to], this.rows[row]];
    }
    this.ready++;
    return to;
  }

  /** One forward pass of every decoding row; finished rows leave. */
  private async decode(): Promise<void> {
    const { info } = this;
    const batch = this.ready;
    const rows = this.rows.slice(0, batch);
    this.cache.reserve(this.cache.rows, this.cache.longest() + 1);
    const t0 = performance.now();
    let outputs: Outputs;
    try {
      outputs = await this.forward.decode(
        slotInputs(
          rows.map((r) => [r.token]),
          rows.map((_, b) => this.cache.lengthOf(b)),
          this.cache.slotLength,
          this.cache.views(0, batch),
        ),
      );
    } catch (err) {
      // One pass computes every row: when it fails, each request in it fails with it.
      const jobs = new Set(rows.map((r) => r.job));
      const error = decodeFailure(
        err,
        `a decode step of ${batch} sequences from ${jobs.size} requests`,
      );
      for (const job of jobs) this.fail(job, error);
      return;
    }
    this.counters.decodeForwardMs += performance.now() - t0;
    this.counters.decodePasses++;
    this.counters.decodeRows += batch;
    this.counters.largestBatch = Math.max(this.counters.largestBatch, batch);
    this.cache.writeNew(outputs, 0, new Array<number>(batch).fill(1));
    const data = (outputs['logits'] as ort.Tensor).data as Float32Array;
    const V = info.vocabSize;
    rows.forEach((row, b) => (row.token = row.job.generation.pick(row.sample, data, b * V, V)));
    const jobs = new Set(rows.map((r) => r.job));
    for (const job of jobs) {
      job.decodeSteps++;
      job.batchRows = Math.max(job.batchRows, batch);
      job.generation.cancelIfAborted();
    }
    for (const job of jobs) if (job.generation.finished) this.finish(job);
    for (const row of rows)
      if (!row.job.generation.finished && row.job.generation.isFinished(row.sample))
        this.remove(this.rows.indexOf(row));
  }

  /** Frees a row: the last decoding row fills its slot, and the last row fills that one. */
  private remove(row: number): void {
    let hole = row;
    if (row < this.ready) {
      const lastReady = this.ready - 1;
      this.move(lastReady, row);
      this.ready--;
      hole = lastReady;
    }
    this.move(this.rows.length - 1, hole);
    this.rows.pop();
    this.cache.pop();
  }

  private move(from: number, to: number): void {
    if (from === to) return;
    this.cache.copyRow(from, to);
    this.rows[to] = this.rows[from];
  }

  /** Keeps the session's cache (what the rows hold of the prompt and its tokens), frees the rows and answers. */
  private finish(job: Job): void {
    const { req, generation } = job;
    const prompt = req.promptIds;
    const row = this.rowOf(job);
    if (req.session && row >= 0) {
      // n = 1: the prompt and every token but the last (never fed); n > 1: the prompt.
      const ids =
        generation.n === 1 ? prompt.concat(generation.samples[0].ids.slice(0, -1)) : prompt;
      const length = Math.min(this.cache.lengthOf(row), ids.length);
      if (length > 0)
        this.sessions.put(req.session, {
          ids: ids.slice(0, length),
          past: this.cache.copyOut(row, length),
        });
    }
    this.release(job);
    this.answer(job);
  }

  protected release(job: Job): void {
    for (let r = this.rowOf(job); r >= 0; r = this.rowOf(job)) this.remove(r);
  }
}
