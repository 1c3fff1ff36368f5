import { PolicyHostClient } from '../../src/core/policy/hostClient';
import { OnnxEngine } from '../../src/core/policy/onnx/engine';
import { GREEDY } from '../../src/core/policy/sampling/sampling';
import { policySizedModel } from '../../test/support/testModels';
import { benchSize, registerBenchCase, timingStats } from '../registry';
import { BareDecodeLoop, median, retailPrompts } from '../support/policyBench';

const NEW_TOKENS = benchSize(64, 4);

registerBenchCase({
  name: 'policy: decode time per token, policy host vs a bare onnxruntime loop',
  description: `a policy-sized random model (hidden 256, 6 layers) on the first act prompt of retail-0000 (tools and policy included), ${NEW_TOKENS} greedy tokens: through the policy host process (JSON-RPC, every token streamed, timed by the caller from the first streamed token to the answer) against a bare session.run loop with the same session options and context; runs alternate, and the target is the median ratio of back-to-back pairs`,
  targets: [{ fact: 'host / bare, per token', atMost: 1.1 }],
  async run(settings) {
    const model = await policySizedModel();
    const { act, tools } = await retailPrompts();
    const engine = await OnnxEngine.load(model, 'cpu');
    const prompt = engine.encode(engine.renderChat(act, tools));
    const info = engine.info;
    await engine.dispose();

    const host = await PolicyHostClient.start({ modelDir: model, device: 'cpu' });
    const bare = await BareDecodeLoop.create(info);
    const hostTimes: number[] = [];
    const inHostTimes: number[] = [];
    const bareTimes: number[] = [];
    let streamed = 0;
    const runs = settings.tiny ? 1 : Math.max(3, Math.min(settings.runs, 7));
    try {
      for (let i = 0; i < Math.min(settings.warmup, 1) + runs; i++) {
        let first = 0;
        let tokens = 0;
        const result = await host.generate(
          {
            messages: act,
            tools,
            n: 1,
            maxTokens: NEW_TOKENS,
            minTokens: NEW_TOKENS,
            sampling: GREEDY,
          },
          () => {
            tokens++;
            first ||= performance.now();
          },
        );
        const end = performance.now();
        const steps = await bare.decode(prompt, NEW_TOKENS - 1);
        if (i < Math.min(settings.warmup, 1)) continue;
        if (result.promptTokens !== prompt.length || result.decodeSteps !== NEW_TOKENS - 1)
          throw new Error(
            `the host decoded ${result.decodeSteps} steps after ${result.promptTokens} prompt tokens`,
          );
        hostTimes.push((end - first) / (NEW_TOKENS - 1));
        inHostTimes.push(result.decodeMs / result.decodeSteps);
        bareTimes.push(steps.reduce((a, b) => a + b, 0) / steps.length);
        streamed = tokens;
      }
    } finally {
      host.dispose();
      await bare.release();
    }
    return {
      baseline: 'bare session.run loop, per token',
      measurements: {
        'policy host, per token (caller)': timingStats(hostTimes),
        'policy host, per token (inside the host)': timingStats(inHostTimes),
        'bare session.run loop, per token': timingStats(bareTimes),
      },
      facts: {
        // Each host run is paired with the bare run right after it: the ratio of a pair cancels most of
        // what other load on the machine does to both.
        'host / bare, per token': Number(
          median(hostTimes.map((h, i) => h / bareTimes[i])).toFixed(3),
        ),
        'host / bare, medians': Number((median(hostTimes) / median(bareTimes)).toFixed(3)),
        'prompt tokens': prompt.length,
        'new tokens': NEW_TOKENS,
        'streamed notifications per generation': streamed,
        model: `${info.numLayers} layers, vocabulary ${info.vocabSize}`,
      },
    };
  },
});
