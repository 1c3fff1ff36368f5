import { PolicyHostClient } from '../../src/core/policy/hostClient';
import type { GenerateResult } from '../../src/core/policy/hostProtocol';
import { GREEDY } from '../../src/core/policy/sampling/sampling';
import type { ChatMessage } from '../../src/core/protocol/types';
import { policySizedModel } from '../../test/support/testModels';
import { benchSize, registerBenchCase, timingStats } from '../registry';
import { median, retailPrompts } from '../support/policyBench';

const NEW_TOKENS = benchSize(64, 4);
const CONCURRENCY = benchSize([1, 4, 8], [1, 2]);

registerBenchCase({
  name: 'policy: 1 vs 4 vs 8 concurrent episodes (continuous batching)',
  description: `a policy-sized random model through the policy host: k concurrent generate requests (k = ${CONCURRENCY.join(', ')}), each its own session (episode) with its own prompt (retail-0000's act or rehearse prompt, with a different last message), ${NEW_TOKENS} greedy tokens each; every session was prefilled once before, so a round encodes only a short new message and measures decoding. The host decodes requests in flight together (one forward pass a step). Rounds alternate k; figures are medians`,
  targets: [{ fact: '8 concurrent / 1, time per round', atMost: 4 }],
  async run(settings) {
    const model = await policySizedModel();
    const { act, tools, rehearse } = await retailPrompts();
    const host = await PolicyHostClient.start({ modelDir: model, device: 'cpu' });
    const episode = (i: number) => ({
      base: i % 2 ? rehearse : act,
      tools: i % 2 ? [] : tools,
      session: `bench-episode-${i}`,
    });
    const generate = (i: number, note: string) => {
      const { base, tools: t, session } = episode(i);
      const messages: ChatMessage[] = [
        ...base,
        { role: 'user', content: `Episode ${i}, ${note}: go on.` },
      ];
      return host.generate({
        messages,
        tools: t,
        session,
        n: 1,
        maxTokens: NEW_TOKENS,
        minTokens: NEW_TOKENS,
        sampling: GREEDY,
      });
    };
    const times = new Map<number, number[]>(CONCURRENCY.map((k) => [k, []]));
    const meanBatch = new Map<number, number>();
    const promptTokens: number[] = [];
    let reused = 0;
    let prefilled = 0;
    const runs = settings.tiny ? 1 : Math.max(2, Math.min(settings.runs, 3));
    try {
      // Each session's prompt is encoded once, as an episode's first turn would be.
      for (let i = 0; i < Math.max(...CONCURRENCY); i++)
        promptTokens.push((await generate(i, 'warm-up')).promptTokens);
      for (let r = 0; r < runs; r++) {
        for (const k of CONCURRENCY) {
          const before = await host.stats();
          const t0 = performance.now();
          const results: GenerateResult[] = await Promise.all(
            Array.from({ length: k }, (_, i) => generate(i, `round ${r}`)),
          );
          times.get(k)!.push(performance.now() - t0);
          const after = await host.stats();
          if (results.some((x) => x.samples[0].completionTokens !== NEW_TOKENS))
            throw new Error('a request stopped early');
          reused += results.reduce((s, x) => s + x.reused, 0);
          prefilled += results.reduce((s, x) => s + x.prefilled, 0);
          meanBatch.set(
            k,
            (after.decodeRows! - before.decodeRows!) / (after.decodePasses! - before.decodePasses!),
          );
        }
      }
    } finally {
      host.dispose();
    }
    const tokensPerSecond = (k: number) => (k * NEW_TOKENS * 1000) / median(times.get(k)!);
    const facts: Record<string, number | string> = {};
    for (const k of CONCURRENCY) {
      facts[`completion tokens/s, ${k} concurrent`] = Number(tokensPerSecond(k).toFixed(1));
      facts[`mean sequences a decode pass, ${k} concurrent (last round)`] = Number(
        meanBatch.get(k)!.toFixed(2),
      );
    }
    for (const k of CONCURRENCY.slice(1)) {
      facts[`throughput ${k} concurrent / 1`] = Number(
        (tokensPerSecond(k) / tokensPerSecond(1)).toFixed(2),
      );
      facts[`${k} concurrent / 1, time per round`] = Number(
        (median(times.get(k)!) / median(times.get(1)!)).toFixed(2),
      );
    }
    facts['prompt tokens (smallest, largest)'] =
      `${Math.min(...promptTokens)}, ${Math.max(...promptTokens)}`;
    facts['prompt tokens reused / prefilled in timed rounds'] = `${reused} / ${prefilled}`;
    return {
      baseline: '1 request',
      measurements: Object.fromEntries(
        CONCURRENCY.map((k) => [
          k === 1 ? '1 request' : `${k} concurrent requests`,
          timingStats(times.get(k)!),
        ]),
      ),
      facts,
    };
  },
});
