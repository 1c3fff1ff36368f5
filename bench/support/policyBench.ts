import * as path from 'node:path';
import * as ort from 'onnxruntime-node';
import { threadOptions } from '../../src/core/policy/onnx/decoder';
import { emptyPast, presentsAsPast } from '../../src/core/policy/onnx/kvCache';
import type { ModelFolderInfo } from '../../src/core/policy/onnx/modelFolder';
import { argmax } from '../../src/core/policy/sampling/sampling';
import { formatToolCalls } from '../../src/core/protocol/actParser';
import { buildRehearsePrompt } from '../../src/core/protocol/rehearsePrompt';
import type { ChatMessage, ToolDefinition } from '../../src/core/protocol/types';
import { loadTaskFile } from '../../src/core/tasks/format/loader';
import { openTaskEnvironment } from '../../src/core/tasks/taskEnvironment';
import { ensureServerBundles, REPO } from '../../test/support/servers';

/** Median of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2
    ? sorted[(sorted.length - 1) / 2]
    : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
}

/** The prompts of a real task: the first act of retail-0000 and the rehearsal of its first call, with the tools its server offers. */
export async function retailPrompts(): Promise<{
  act: ChatMessage[];
  tools: ToolDefinition[];
  rehearse: ChatMessage[];
}> {
  ensureServerBundles();
  const loaded = await loadTaskFile(path.join(REPO, 'examples', 'tasks', 'retail-0000.task.json'));
  const env = await openTaskEnvironment(loaded);
  try {
    await env.startEpisode(loaded.task.seed);
    const tools = env.tools();
    const act: ChatMessage[] = [
      { role: 'system', content: loaded.task.system! },
      { role: 'user', content: loaded.task.turns[0].user },
    ];
    const call = loaded.task.reference!.turns[0].calls[0];
    const rehearse = buildRehearsePrompt({
      tools,
      examples: loaded.task.examples,
      history: act,
      latestText: formatToolCalls([call]),
      call,
    });
    return { act, tools, rehearse };
  } finally {
    await env.close();
  }
}

/**
 * The bare baseline: one onnxruntime-node session with the policy host's own session options, and a
 * plain greedy decode loop (feeds built per step, argmax of the last logits row), nothing else.
 */
export class BareDecodeLoop {
  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly info: ModelFolderInfo,
  ) {}

  static async create(info: ModelFolderInfo): Promise<BareDecodeLoop> {
    const file = path.join(info.dir, info.onnxFile);
    const session = await ort.InferenceSession.create(file, {
      executionProviders: ['cpu'],
      logSeverityLevel: 3,
      ...(await threadOptions(file, 'cpu', undefined)),
    });
    return new BareDecodeLoop(session, info);
  }

  /** Prefills `prompt`, then decodes `steps` tokens; returns the milliseconds of each decode step. */
  async decode(prompt: readonly number[], steps: number): Promise<number[]> {
    const { numLayers, numKeyValueHeads, headDim, vocabSize } = this.info;
    const feeds = (
      ids: readonly number[],
      pastLength: number,
      past: Record<string, ort.Tensor>,
    ) => {
      const total = pastLength + ids.length;
      const positions = new BigInt64Array(ids.length);
      for (let j = 0; j < ids.length; j++) positions[j] = BigInt(pastLength + j);
      return {
        input_ids: new ort.Tensor(
          'int64',
          BigInt64Array.from(ids, (x) => BigInt(x)),
          [1, ids.length],
        ),
        attention_mask: new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
        position_ids: new ort.Tensor('int64', positions, [1, ids.length]),
        ...past,
      };
    };
    let out = await this.session.run(
      feeds(prompt, 0, emptyPast(numLayers, numKeyValueHeads, headDim, 1)),
    );
    const next = () => {
      const logits = out['logits'] as ort.Tensor;
      return argmax(logits.data as Float32Array, (logits.dims[1] - 1) * vocabSize, vocabSize);
    };
    let token = next();
    const times: number[] = [];
    for (let k = 0; k < steps; k++) {
      const t0 = performance.now();
      out = await this.session.run(
        feeds([token], prompt.length + k, presentsAsPast(out, numLayers)),
      );
      token = next();
      times.push(performance.now() - t0);
    }
    return times;
  }

  release(): Promise<void> {
    return this.session.release();
  }
}
