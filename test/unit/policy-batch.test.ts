// Continuous batching in the policy host: requests in flight decode together, one forward pass a step,
// with either KV cache: `slots` (the slots graph reads each row's slot in place, slotScheduler.ts) and
// `copy` (the main graph, rows of different lengths padded on the left, batchScheduler.ts). A request's
// tokens must not depend on what it was batched with (greedy, or sampled with its own seed), nor on
// which of the two decodes it; sessions, the cascade graph, cancellation and errors stay per request;
// the batch and the KV cache stay within their bounds. Across processes (the policy host, `rehearse
// serve`): test/e2e/policy-batch-host.test.ts.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { BatchLimits, ForwardPasses } from '../../src/core/policy/onnx/batchScheduler';
import { BatchScheduler, batchLimits } from '../../src/core/policy/onnx/batchScheduler';
import type {
  GenerateRequest,
  GenerateResult,
  KvCacheMode,
} from '../../src/core/policy/onnx/decoder';
import { OnnxDecoder } from '../../src/core/policy/onnx/decoder';
import type { ModelFolderInfo } from '../../src/core/policy/onnx/modelFolder';
import { readModelFolder } from '../../src/core/policy/onnx/modelFolder';
import { SlotScheduler } from '../../src/core/policy/onnx/slotScheduler';
import { GREEDY } from '../../src/core/policy/sampling/sampling';
import { REPO } from '../support/servers';
import { rejects } from '../support/errors';

const DEFAULT_POLICY = path.join(REPO, 'models', 'default');

/** A prompt of `length` token ids, different for each `salt` (ids below the special tokens). */
const promptOf = (length: number, salt: number, vocab: number) =>
  Array.from({ length }, (_, i) => (i * 37 + 11 + salt * 101) % (vocab - 16));

/** Prompt lengths of the requests decoded together: short and long rows in one batch. */
const LENGTHS = [5, 300, 40, 17, 120];

const ids = (r: GenerateResult) => r.samples.map((s) => s.ids);

/** Runs requests one after another. */
async function oneAtATime(
  generate: (req: GenerateRequest) => Promise<GenerateResult>,
  requests: GenerateRequest[],
): Promise<GenerateResult[]> {
  const out: GenerateResult[] = [];
  for (const r of requests) out.push(await generate(r));
  return out;
}

for (const kvCache of ['slots', 'copy'] as KvCacheMode[])
  describe(`policy host, ${kvCache} KV cache: requests in flight decode together (continuous batching)`, function () {
    this.timeout(120_000);
    let info: ModelFolderInfo;
    let decoder: OnnxDecoder;
    let plainDecoder: OnnxDecoder;
    const request = (
      promptIds: number[],
      extra: Partial<GenerateRequest> = {},
    ): GenerateRequest => ({
      promptIds,
      n: 1,
      maxTokens: 24,
      sampling: GREEDY,
      ...extra,
    });
    // Different lengths of output too: rows leave the batch at different steps.
    const requests = () =>
      LENGTHS.map((length, i) =>
        request(promptOf(length, i, info.vocabSize), {
          maxTokens: 12 + 6 * i,
          minTokens: 12 + 6 * i,
        }),
      );

    before(async () => {
      info = await readModelFolder(DEFAULT_POLICY);
      decoder = await OnnxDecoder.load(info, 'cpu', undefined, { kvCache });
      plainDecoder = await OnnxDecoder.load({ ...info, cascadeFile: undefined }, 'cpu', undefined, {
        kvCache,
      });
      assert.equal(decoder.kvCache, kvCache);
    });
    after(async () => {
      await decoder?.dispose();
      await plainDecoder?.dispose();
    });

    it('greedy: prompts of 5 to 300 tokens give the same tokens alone and decoded together, joining and leaving at different steps', async () => {
      const alone = await oneAtATime((r) => decoder.generate(r), requests());
      const before = decoder.batchStats;
      const [first, ...others] = requests();
      // Three start together; two more arrive while the first has decoded 5 tokens.
      let late: Promise<GenerateResult>[] = [];
      let streamed = 0;
      const started = [
        decoder.generate({
          ...first,
          decode: (t) => t.map((id) => `<${id}>`).join(''),
          onToken: () => {
            if (++streamed === 5) late = others.slice(2).map((r) => decoder.generate(r));
          },
        }),
        ...others.slice(0, 2).map((r) => decoder.generate(r)),
      ];
      const early = await Promise.all(started);
      const together = [...early, ...(await Promise.all(late))];
      assert.equal(together.length, LENGTHS.length);
      assert.deepEqual(together.map(ids), alone.map(ids));
      assert.ok(
        together.every((r) => r.batchRows > 1),
        `every request shared a pass: ${together.map((r) => r.batchRows).join(', ')}`,
      );
      const after = decoder.batchStats;
      const steps = together.reduce((s, r) => s + r.decodeSteps, 0);
      assert.ok(
        after.decodePasses - before.decodePasses < steps,
        `${after.decodePasses - before.decodePasses} passes for ${steps} request steps`,
      );
      assert.equal(after.decodeRows - before.decodeRows, steps, 'each request step is one row');
    });

    it("sampled: each request's samples depend only on its own seed, whoever it is batched with", async () => {
      const sampled = (i: number, n: number) =>
        request(promptOf(LENGTHS[i], i, info.vocabSize), {
          n,
          maxTokens: 16,
          minTokens: 16,
          sampling: { ...GREEDY, temperature: 1, seed: 7 + i },
        });
      for (const d of [plainDecoder, decoder]) {
        // With the plain graph (and with slots) the 3 samples are rows of the shared batch; with the
        // cascade graph they decode on their own beside it.
        const mine = sampled(1, 3);
        // Whether the 3 samples differ depends on the model's distribution: policy-sampling.test.ts
        // asserts it on fixed logits.
        const alone = await d.generate(mine);
        const companions = [sampled(0, 1), sampled(2, 1), sampled(3, 2)];
        const withSome = await Promise.all([mine, ...companions].map((r) => d.generate(r)));
        const withOthers = await Promise.all(
          [sampled(4, 1), mine, sampled(0, 1)].map((r) => d.generate(r)),
        );
        assert.deepEqual(ids(withSome[0]), ids(alone));
        assert.deepEqual(ids(withOthers[1]), ids(alone));
        assert.equal(withSome[0].sharedPrefix, d === decoder && kvCache === 'copy');
        const companionsAlone = await oneAtATime((r) => d.generate(r), companions);
        assert.deepEqual(withSome.slice(1).map(ids), companionsAlone.map(ids));
      }
    });

    it("keeps each session's cache inside the batch: the next turns, decoded together, encode only their new suffix", async () => {
      const sessions = ['batch-a', 'batch-b', 'batch-c'];
      const firstTurn = sessions.map((session, i) =>
        request(promptOf(LENGTHS[i + 1], i, info.vocabSize), {
          session,
          n: i === 2 ? 3 : 1, // the cascade graph's prompt cache is a session too
          maxTokens: 10,
          minTokens: 10,
        }),
      );
      const first = await Promise.all(firstTurn.map((r) => decoder.generate(r)));
      const nextTurn = firstTurn.map((r, i) =>
        request(r.promptIds.concat(first[i].samples[0].ids, [40, 41, 42]), {
          session: r.session,
          n: r.n,
          maxTokens: 10,
          minTokens: 10,
        }),
      );
      const next = await Promise.all(nextTurn.map((r) => decoder.generate(r)));
      next.forEach((r, i) =>
        assert.ok(
          r.reused >= firstTurn[i].promptIds.length,
          `session ${sessions[i]}: reused ${r.reused} of ${r.promptTokens}`,
        ),
      );
      assert.ok(next[0].batchRows > 1 && next[1].batchRows > 1);
      const fresh = await oneAtATime(
        (r) => decoder.generate(r),
        nextTurn.map((r) => ({ ...r, session: undefined })),
      );
      assert.deepEqual(
        next.map(ids),
        fresh.map(ids),
        'with or without the caches, the same tokens',
      );
      for (const s of sessions) decoder.endSession(s);
    });

    it('cancelling one request ends only it; a prompt too long fails alone with PROMPT_TOO_LONG', async () => {
      const [a, b, c] = requests();
      const alone = await oneAtATime((r) => decoder.generate(r), [a, c]);
      const abort = new AbortController();
      let streamed = 0;
      const cancelled = decoder.generate({
        ...b,
        signal: abort.signal,
        decode: (t) => t.map((id) => `<${id}>`).join(''),
        onToken: () => {
          if (++streamed === 3) abort.abort();
        },
      });
      const tooLong = decoder.generate(
        request(promptOf(info.maxPositions - 4, 9, info.vocabSize), { maxTokens: 8 }),
      );
      const others = Promise.all([a, c].map((r) => decoder.generate(r)));
      assert.equal((await rejects(tooLong)).code, 'PROMPT_TOO_LONG');
      const stopped = await cancelled;
      assert.equal(stopped.samples[0].finish, 'cancelled');
      assert.equal(stopped.samples[0].ids.length, 3);
      assert.deepEqual((await others).map(ids), alone.map(ids));
    });

    describe('limits and failures (the scheduler over its own sessions)', () => {
      let plain: ort.InferenceSession;
      let cascade: ort.InferenceSession;
      let slots: ort.InferenceSession;
      let failShared = false;
      // Fault injection: a decode pass of more than one sequence fails in "onnxruntime".
      const faulty =
        (session: () => ort.InferenceSession) => async (feeds: Record<string, ort.Tensor>) => {
          if (failShared && feeds['input_ids'].dims[0] > 1 && feeds['input_ids'].dims[1] === 1)
            throw new Error('Non-zero status code returned while running MatMul node');
          return session().run(feeds);
        };
      const forward = (): ForwardPasses => ({
        plain: faulty(() => plain),
        cascade: (feeds) => cascade.run(feeds),
        positionIds: true,
      });
      const scheduler = (limits: BatchLimits) =>
        kvCache === 'slots'
          ? new SlotScheduler(
              info,
              { decode: faulty(() => slots), prefill: (feeds) => plain.run(feeds) },
              limits,
            )
          : new BatchScheduler(info, forward(), limits);

      before(async () => {
        const options = { executionProviders: ['cpu'], logSeverityLevel: 3 as const };
        plain = await ort.InferenceSession.create(path.join(info.dir, info.onnxFile), options);
        cascade = await ort.InferenceSession.create(
          path.join(info.dir, info.cascadeFile!),
          options,
        );
        slots = await ort.InferenceSession.create(path.join(info.dir, info.slotsFile!), options);
      });
      after(async () => {
        await plain?.release();
        await cascade?.release();
        await slots?.release();
      });

      it('a failed shared pass fails every request in it with POLICY_DECODE_FAILED; a request decoding on its own (copy: the cascade graph) goes on, and so does the next one', async () => {
        const s = scheduler(batchLimits(info));
        const [a, b, c] = requests();
        const cascaded = request(promptOf(60, 5, info.vocabSize), {
          n: 2,
          maxTokens: 16,
          minTokens: 16,
        });
        const expected = await oneAtATime((r) => s.generate(r), [cascaded, c]);
        failShared = true;
        try {
          const settled = await Promise.allSettled([a, b, cascaded].map((r) => s.generate(r)));
          // With slots, the n = 2 request's samples are rows of the shared pass too.
          const failed = kvCache === 'slots' ? 3 : 2;
          for (const r of settled.slice(0, failed)) {
            assert.equal(r.status, 'rejected');
            const err = (r as PromiseRejectedResult).reason as { code?: string; message: string };
            assert.equal(err.code, 'POLICY_DECODE_FAILED');
            assert.match(
              err.message,
              kvCache === 'slots'
                ? /onnxruntime failed in a decode step of 4 sequences from 3 requests/
                : /onnxruntime failed in a decode step of 2 sequences/,
            );
          }
          if (kvCache === 'copy') {
            assert.equal(settled[2].status, 'fulfilled');
            assert.deepEqual(ids((settled[2] as PromiseFulfilledResult<GenerateResult>).value), [
              ...ids(expected[0]),
            ]);
          }
        } finally {
          failShared = false;
        }
        assert.deepEqual(ids(await s.generate(c)), ids(expected[1]), 'the host decodes on');
        await s.dispose();
      });

      it('at most maxSequences decode at once and a request over the KV budget waits; all finish with their own tokens', async () => {
        const alone = await oneAtATime((r) => decoder.generate(r), requests());
        const few = scheduler({ maxSequences: 2, maxCachedTokens: 1_000_000 });
        const running = requests().map((r) => few.generate(r));
        // Sixth in line behind two at a time: it waits, and is cancelled meanwhile.
        const abort = new AbortController();
        const waiting = few.generate({ ...requests()[4], signal: abort.signal });
        await Promise.resolve();
        abort.abort();
        assert.deepEqual((await Promise.all(running)).map(ids), alone.map(ids));
        assert.equal(few.stats.largestBatch, 2);
        const skipped = await waiting;
        assert.deepEqual(
          [skipped.samples[0].finish, skipped.samples[0].ids, skipped.prefilled],
          ['cancelled', [], 0],
          'cancelled while it waited: ended without a prefill',
        );
        await few.dispose();
        // 300 + 24 tokens fit; two such rows (the batch is as wide as its longest) do not.
        const small = scheduler({ maxSequences: 64, maxCachedTokens: 400 });
        const long = [0, 1].map((i) =>
          request(promptOf(300, i, info.vocabSize), { maxTokens: 24, minTokens: 24 }),
        );
        const waited = await Promise.all(long.map((r) => small.generate(r)));
        assert.equal(small.stats.largestBatch, 1, 'the second waited for the first');
        assert.deepEqual(
          waited.map(ids),
          (await oneAtATime((r) => decoder.generate(r), long)).map(ids),
        );
        await small.dispose();
      });

      it("evicts idle sessions' caches least recently used first to stay within the KV budget", async () => {
        const s = scheduler({ maxSequences: 64, maxCachedTokens: 400 });
        const turn = (session: string, promptIds: number[]) =>
          s.generate(request(promptIds, { session, maxTokens: 8, minTokens: 8 }));
        const prompts = new Map(
          ['a', 'b', 'c'].map((k, i) => [k, promptOf(100, i, info.vocabSize)]),
        );
        const next = async (session: string) => {
          const prompt = prompts.get(session)!;
          const result = await turn(session, prompt);
          prompts.set(session, prompt.concat(result.samples[0].ids, [50, 51, 52, 53, 54]));
          return result;
        };
        for (const k of ['a', 'b', 'c']) await next(k); // 107 cached tokens each
        assert.equal((await next('a')).reused, 107); // a is now the most recent: b, c, a
        // 150 + 8 tokens more do not fit beside all three: b, the least recently used, goes.
        await s.generate(request(promptOf(150, 7, info.vocabSize), { maxTokens: 8 }));
        assert.equal((await next('b')).reused, 0, 'b was evicted');
        assert.equal((await next('c')).reused, 107, 'c was kept');
        assert.equal((await next('a')).reused, 120, 'a was kept');
        await s.dispose();
      });
    });
  });

describe('policy host: the slots graph decodes the tokens the main graph decodes', function () {
  this.timeout(120_000);

  it('greedy, alone and together, with sessions: the same tokens from both KV caches', async () => {
    const info = await readModelFolder(DEFAULT_POLICY);
    const slots = await OnnxDecoder.load(info, 'cpu', undefined, { kvCache: 'slots' });
    const copy = await OnnxDecoder.load(info, 'cpu', undefined, { kvCache: 'copy' });
    try {
      const requests = LENGTHS.map((length, i) => ({
        promptIds: promptOf(length, i, info.vocabSize),
        n: 1,
        maxTokens: 20,
        minTokens: 20,
        sampling: GREEDY,
        session: `s${i}`,
      }));
      const run = async (d: OnnxDecoder) => {
        const first = await Promise.all(requests.map((r) => d.generate(r)));
        // The next turn of each session: its cache is reused, only the new suffix prefilled.
        const next = await Promise.all(
          requests.map((r, i) =>
            d.generate({ ...r, promptIds: r.promptIds.concat(first[i].samples[0].ids, [60, 61]) }),
          ),
        );
        return [...first, ...next];
      };
      const [a, b] = [await run(slots), await run(copy)];
      assert.deepEqual(a.map(ids), b.map(ids));
      assert.ok(a.slice(LENGTHS.length).every((r) => r.reused > 0));
    } finally {
      await slots.dispose();
      await copy.dispose();
    }
  });
});

describe('policy host: a folder without the slots graph, or with a broken one', function () {
  this.timeout(60_000);

  it('decodes with the main graph without it (an older export), and names a broken one (MODEL_FILE_BROKEN)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'no-slots-'));
    try {
      await fs.cp(DEFAULT_POLICY, dir, { recursive: true });
      await fs.writeFile(path.join(dir, 'onnx', 'model_slots.onnx'), Buffer.alloc(4096, 7));
      const broken = await rejects(OnnxDecoder.load(await readModelFolder(dir), 'cpu'));
      assert.equal(broken.code, 'MODEL_FILE_BROKEN');
      assert.match(broken.message, /onnx[/\\]model_slots\.onnx cannot be loaded/);
      await fs.rm(path.join(dir, 'onnx', 'model_slots.onnx'));
      const older = await readModelFolder(dir);
      assert.equal(older.slotsFile, undefined);
      const decoder = await OnnxDecoder.load(older, 'cpu');
      try {
        assert.equal(decoder.kvCache, 'copy');
        const result = await decoder.generate({
          promptIds: promptOf(40, 0, older.vocabSize),
          n: 1,
          maxTokens: 4,
          minTokens: 4,
          sampling: GREEDY,
        });
        assert.equal(result.samples[0].ids.length, 4);
      } finally {
        await decoder.dispose();
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('policy host, slots: prompts that share a prefix (the system prompt and tools of a task set)', function () {
  this.timeout(60_000);

  it("copy the prefix from a request in flight or an ended episode's cache instead of prefilling it; the tokens are the same", async () => {
    const info = await readModelFolder(DEFAULT_POLICY);
    const slots = await OnnxDecoder.load(info, 'cpu', undefined, { kvCache: 'slots' });
    const copy = await OnnxDecoder.load(info, 'cpu', undefined, { kvCache: 'copy' });
    try {
      const shared = promptOf(200, 3, info.vocabSize);
      const episode = (i: number, session: string) => ({
        promptIds: shared.concat(promptOf(10 + i, 20 + i, info.vocabSize)),
        n: 1,
        maxTokens: 12,
        minTokens: 12,
        sampling: GREEDY,
        session,
      });
      // Two episodes in flight together: the second reads the first's prompt from its row.
      const together = await Promise.all([0, 1].map((i) => slots.generate(episode(i, `e${i}`))));
      assert.equal(together[0].reused + together[1].reused, 200, 'one of them copied the other');
      // An episode after both ended: the prefix comes from an ended episode's cache.
      for (const s of ['e0', 'e1']) slots.endSession(s);
      const later = await slots.generate(episode(2, 'e2'));
      assert.equal(later.reused, 200);
      assert.equal(later.prefilled, later.promptTokens - 200);
      const expected = await oneAtATime(
        (r) => copy.generate(r),
        [0, 1, 2].map((i) => episode(i, `c${i}`)),
      );
      assert.deepEqual([...together, later].map(ids), expected.map(ids));
      assert.deepEqual(
        expected.map((r) => r.reused),
        [0, 0, 0],
        'the copying loop prefills every episode',
      );
    } finally {
      await slots.dispose();
      await copy.dispose();
    }
  });
});
