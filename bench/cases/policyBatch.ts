import { PolicyHostClient } from '../../src/core/policy/hostClient';
import { GREEDY } from '../../src/core/policy/sampling/sampling';
import { policySizedModel } from '../../test/support/testModels';
import { benchSize, registerBenchCase, timingStats } from '../registry';
import { median, retailPrompts } from '../support/policyBench';

const SAMPLES = benchSize(8, 2);
const NEW_TOKENS = benchSize(64, 4);

registerBenchCase({
  name: 'policy: n=8 rehearsal samples batched vs 8 sequential vs one',
  description: `a policy-sized random model on the rehearse prompt of retail-0000's first call, ${NEW_TOKENS} tokens per sample at temperature 1 (each sample as long as the others), through the policy host: one call with n = ${SAMPLES} (one prefill, one batch; with the model's cascade graph the samples share one copy of the prompt's cache), ${SAMPLES} calls with n = 1, and one call with n = 1; runs alternate, ratios are medians of back-to-back runs`,
  targets: [{ fact: `${SAMPLES} batched / one`, atMost: 3 }],
  async run(settings) {
    const model = await policySizedModel();
    const { rehearse } = await retailPrompts();
    const host = await PolicyHostClient.start({ modelDir: model, device: 'cpu' });
    const generate = async (n: number, seed: number) => {
      const t0 = performance.now();
      const result = await host.generate(
        {
          messages: rehearse,
          tools: [],
          n,
          maxTokens: NEW_TOKENS,
          minTokens: NEW_TOKENS,
          sampling: { ...GREEDY, temperature: 1, seed },
        },
        () => undefined,
      );
      if (result.samples.some((s) => s.completionTokens !== NEW_TOKENS))
        throw new Error('a sample stopped early');
      return { ms: performance.now() - t0, result };
    };
    const one: number[] = [];
    const batched: number[] = [];
    const sequential: number[] = [];
    let promptTokens = 0;
    let batchedDecodeStep = 0;
    let sharedPrefix = false;
    let singleDecodeStep = 0;
    const runs = settings.tiny ? 1 : Math.max(2, Math.min(settings.runs, 4));
    try {
      await generate(1, 0);
      for (let r = 0; r < runs; r++) {
        const single = await generate(1, r);
        one.push(single.ms);
        const batch = await generate(SAMPLES, r);
        batched.push(batch.ms);
        let sum = 0;
        for (let i = 0; i < SAMPLES; i++) sum += (await generate(1, r * SAMPLES + i)).ms;
        sequential.push(sum);
        promptTokens = single.result.promptTokens;
        singleDecodeStep = single.result.decodeMs / single.result.decodeSteps;
        batchedDecodeStep = batch.result.decodeMs / batch.result.decodeSteps;
        sharedPrefix = batch.result.sharedPrefix;
      }
    } finally {
      host.dispose();
    }
    return {
      baseline: 'one rehearsal (n = 1)',
      measurements: {
        'one rehearsal (n = 1)': timingStats(one),
        [`${SAMPLES} rehearsals batched (n = ${SAMPLES})`]: timingStats(batched),
        [`${SAMPLES} rehearsals in sequence`]: timingStats(sequential),
      },
      facts: {
        // Ratios of back-to-back runs (one, then batched, then sequential), their median.
        [`${SAMPLES} batched / one`]: Number(median(batched.map((b, i) => b / one[i])).toFixed(3)),
        [`${SAMPLES} sequential / one`]: Number(
          median(sequential.map((q, i) => q / one[i])).toFixed(3),
        ),
        'prompt tokens': promptTokens,
        'decode step, batch 1 (ms, last run)': Number(singleDecodeStep.toFixed(2)),
        [`decode step, batch ${SAMPLES} (ms, last run)`]: Number(batchedDecodeStep.toFixed(2)),
        "batched samples share the prompt's cache": sharedPrefix
          ? 'yes (cascade graph)'
          : 'no (a copy per sample)',
      },
    };
  },
});
