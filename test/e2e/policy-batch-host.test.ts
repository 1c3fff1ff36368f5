// Continuous batching across processes: the policy host and `rehearse serve` decode concurrent
// requests in shared passes. The scheduler itself is unit-tested (test/unit/policy-batch.test.ts).
import * as assert from 'node:assert/strict';
import { PolicyHostClient } from '../../src/core/policy/hostClient';
import { OpenAICompatibleServer } from '../../src/core/policy/openaiServer';
import { GREEDY } from '../../src/core/policy/sampling/sampling';
import { ensurePolicyHostBundle } from '../support/servers';
import { randomTestModel } from '../support/testModels';

describe('policy host process and `rehearse serve`: concurrent requests share decode passes', function () {
  this.timeout(120_000);
  let host: PolicyHostClient;

  before(async function () {
    this.timeout(300_000);
    ensurePolicyHostBundle();
    host = await PolicyHostClient.start({ modelDir: await randomTestModel(1), device: 'cpu' });
  });
  after(() => host?.dispose());

  it('streams each request its own tokens and cancels one alone; the counters add up', async () => {
    const before = await host.stats();
    const ask = (
      content: string,
      maxTokens: number,
      onToken: (d: string) => void,
      signal?: AbortSignal,
    ) =>
      host.generate(
        {
          messages: [{ role: 'user', content }],
          tools: [],
          n: 1,
          maxTokens,
          minTokens: maxTokens,
          sampling: GREEDY,
        },
        (_sample, delta) => onToken(delta),
        signal,
      );
    const pieces: string[][] = [[], [], []];
    const abort = new AbortController();
    // Every length is forced (min_tokens = max_tokens), so what follows holds for any weights: the
    // three are in flight together; the second ends after 40 tokens, while the first and the third
    // have more to decode, and the third is cancelled then, mid-decode (issue 39: nothing waits on
    // what a random model streams).
    const first = ask('The first conversation', 160, (d) => pieces[0].push(d));
    const second = ask('A second, longer conversation about the weather in Oslo', 40, (x) =>
      pieces[1].push(x),
    );
    const third = ask('The third one', 200, (x) => pieces[2].push(x), abort.signal);
    const secondResult = await second;
    abort.abort();
    const results = [await first, secondResult, await third];
    results.forEach((r, i) => {
      // The stream holds back a character still incomplete at the end (this model writes bytes).
      assert.ok(r.samples[0].text.startsWith(pieces[i].join('')), `request ${i}`);
    });
    results.slice(0, 2).forEach((r, i) => {
      assert.equal(r.samples[0].finish, 'length', `request ${i}`);
      assert.equal(r.samples[0].completionTokens, [160, 40][i], `request ${i}`);
    });
    assert.equal(results[2].samples[0].finish, 'cancelled');
    assert.ok(results[2].samples[0].completionTokens < 200);
    assert.ok((results[1].batchRows ?? 0) > 1, 'the second shared passes with the first');
    const after = await host.stats();
    const sum = (f: (r: (typeof results)[number]) => number) =>
      results.reduce((s, r) => s + f(r), 0);
    assert.equal(after.requests - before.requests, 3);
    assert.equal(
      after.promptTokens - before.promptTokens,
      sum((r) => r.promptTokens),
    );
    assert.equal(
      after.prefilled - before.prefilled + (after.reused - before.reused),
      after.promptTokens - before.promptTokens,
    );
    assert.equal(
      after.completionTokens - before.completionTokens,
      sum((r) => r.samples[0].completionTokens),
    );
    assert.equal(
      after.decodeSteps - before.decodeSteps,
      sum((r) => r.decodeSteps),
    );
    assert.ok(after.decodePasses! - before.decodePasses! < after.decodeSteps - before.decodeSteps);
  });

  it('`rehearse serve`: two concurrent chat completions both complete, decoded in shared passes', async () => {
    const server = new OpenAICompatibleServer(host, 'random');
    const baseURL = await server.listen(0);
    try {
      const before = await host.stats();
      // vLLM's min_tokens: the end token cannot end either early, so both are still decoding when the
      // other arrives, whatever this random model writes.
      const post = (content: string) =>
        fetch(`${baseURL}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            messages: [{ role: 'user', content }],
            max_tokens: 128,
            min_tokens: 128,
          }),
        });
      const responses = await Promise.all([post('Hello there'), post('What is 2 + 2, exactly?')]);
      const bodies = (await Promise.all(responses.map((r) => r.json()))) as {
        choices: { finish_reason: string; message: { content: string } }[];
        usage: { completion_tokens: number };
      }[];
      assert.deepEqual(
        responses.map((r) => r.status),
        [200, 200],
      );
      assert.deepEqual(
        bodies.map((b) => [b.usage.completion_tokens, b.choices[0].finish_reason]),
        [
          [128, 'length'],
          [128, 'length'],
        ],
      );
      const after = await host.stats();
      assert.equal(after.requests - before.requests, 2);
      assert.ok(
        after.decodePasses! - before.decodePasses! < after.decodeSteps - before.decodeSteps,
        `${after.decodePasses! - before.decodePasses!} passes for ${after.decodeSteps - before.decodeSteps} request steps: some were shared`,
      );
    } finally {
      await server.close();
    }
  });
});
