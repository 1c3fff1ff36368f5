import { statSync, existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ort from 'onnxruntime-node';
import { readModelFolder } from '../../src/core/policy/onnx/modelFolder';
import { OnnxDecoder } from '../../src/core/policy/onnx/decoder';
import type { Device } from '../../src/core/policy/onnx/device';
import { emptyPast, presentsAsPast } from '../../src/core/policy/onnx/kvCache';
import { argmax, GREEDY } from '../../src/core/policy/sampling/sampling';

/**
 * Decode speed of the studio's policy decoder against a bare onnxruntime-node loop on the same model,
 * device and context length, at batch 1 and 8; and tokens/s against the memory-bandwidth limit
 * (each decoded token reads every weight once). Needs no tokenizer, so it runs where only
 * onnxruntime-node is present (the GPU machine).
 * Usage: node decode-bench.js <modelDir> <device> [promptTokens] [newTokens] [bandwidthGBs] [out.json] [host|device|both]
 * (where the KV cache lives between steps, webgpu only). Results are written after each measurement, so a
 * native crash part-way (seen with onnxruntime's WebGPU provider) keeps what was measured before it.
 */
async function main(): Promise<void> {
  const [
    dir,
    deviceArg = 'cpu',
    promptArg = '256',
    newArg = '64',
    bandwidthArg = '0',
    outFile,
    kvArg = 'both',
  ] = process.argv.slice(2);
  const device = deviceArg as Device;
  const P = Number(promptArg);
  const N = Number(newArg);
  const bandwidth = Number(bandwidthArg) * 1e9;
  const info = await readModelFolder(dir);
  const onnx = path.join(dir, info.onnxFile);
  const weightBytes =
    statSync(onnx).size + (existsSync(onnx + '_data') ? statSync(onnx + '_data').size : 0);
  const prompt = Array.from({ length: P }, (_, i) => 1 + ((i * 7919) % (info.vocabSize - 1)));
  const results: Record<string, unknown> = {
    model: dir,
    device,
    promptTokens: P,
    newTokens: N,
    weightBytes,
  };
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const save = () => {
    if (outFile) writeFileSync(outFile, JSON.stringify(results, null, 2));
  };
  const kvPlaces =
    device !== 'webgpu'
      ? [false]
      : kvArg === 'host'
        ? [false]
        : kvArg === 'device'
          ? [true]
          : [false, true];

  for (const kvOnDevice of kvPlaces) {
    const label = kvOnDevice ? 'kv-on-device' : 'kv-on-host';
    // Bare loop: the same session options the decoder uses, feeds built by hand, greedy argmax.
    let t0 = performance.now();
    let decoder: OnnxDecoder;
    try {
      decoder = await OnnxDecoder.load(info, device, undefined, { kvOnDevice });
    } catch (err) {
      results[label] = { error: String((err as Error).message).slice(0, 400) };
      continue;
    }
    const loadMs = performance.now() - t0;
    for (const batch of [1, 8]) {
      // Warm-up, then the studio decoder.
      await decoder.generate({
        promptIds: prompt,
        n: batch,
        maxTokens: 4,
        minTokens: 4,
        sampling: GREEDY,
      });
      const studio = await decoder.generate({
        promptIds: prompt,
        n: batch,
        maxTokens: N,
        minTokens: N,
        sampling: batch === 1 ? GREEDY : { ...GREEDY, temperature: 1, seed: 1 },
      });
      const studioMsPerStep = studio.decodeMs / studio.decodeSteps;
      results[`${label}/batch${batch}/studio`] = {
        msPerStep: studioMsPerStep,
        tokensPerS: (1000 * batch) / studioMsPerStep,
        prefillMs: studio.prefillMs,
        loadMs,
      };
      save();
      console.log(
        label,
        `batch ${batch}`,
        JSON.stringify(results[`${label}/batch${batch}/studio`]),
      );
    }
    await decoder.dispose();

    const session = await ort.InferenceSession.create(onnx, {
      executionProviders: [device],
      logSeverityLevel: 3,
    });
    const L = info.numLayers;
    const i64 = (a: number[], dims: number[]) =>
      new ort.Tensor('int64', BigInt64Array.from(a.map(BigInt)), dims);
    const feeds = (ids: number[], pastLen: number, past: Record<string, ort.Tensor>) => ({
      input_ids: i64(ids, [1, ids.length]),
      attention_mask: i64(Array(pastLen + ids.length).fill(1), [1, pastLen + ids.length]),
      position_ids: i64(
        ids.map((_, j) => pastLen + j),
        [1, ids.length],
      ),
      ...past,
    });
    const bare = async (): Promise<number[]> => {
      let out = await session.run(
        feeds(prompt, 0, emptyPast(L, info.numKeyValueHeads, info.headDim, 1)),
      );
      const steps: number[] = [];
      const logits = () => {
        const t = out['logits'] as ort.Tensor;
        return argmax(t.data as Float32Array, (t.dims[1] - 1) * info.vocabSize, info.vocabSize);
      };
      let next = logits();
      for (let k = 1; k < N; k++) {
        t0 = performance.now();
        out = await session.run(feeds([next], P + k - 1, presentsAsPast(out, L)));
        next = logits();
        steps.push(performance.now() - t0);
      }
      return steps;
    };
    await bare();
    const bareSteps = await bare();
    const bareMs = bareSteps.reduce((a, b) => a + b, 0) / bareSteps.length;
    results[`${label}/batch1/bare`] = {
      msPerStep: bareMs,
      medianMs: median(bareSteps),
      tokensPerS: 1000 / bareMs,
    };
    const studio1 = results[`${label}/batch1/studio`] as { msPerStep: number; tokensPerS: number };
    results[`${label}/batch1/ratio`] = studio1.msPerStep / bareMs;
    if (bandwidth > 0) {
      const limit = bandwidth / weightBytes;
      results[`${label}/bandwidthLimitTokensPerS`] = limit;
      results[`${label}/batch1/shareOfLimit`] = studio1.tokensPerS / limit;
    }
    save();
    console.log(label, 'bare', JSON.stringify(results[`${label}/batch1/bare`]));
    await session.release();
  }
  save();
  console.log(JSON.stringify(results, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
