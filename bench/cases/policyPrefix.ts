import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Disposable } from '../../src/core/base/disposable';
import { OnnxEngine } from '../../src/core/policy/onnx/engine';
import { OnnxPolicy } from '../../src/core/policy/onnxPolicy';
import { ReferencePolicy } from '../../src/core/policy/referencePolicy';
import type {
  ActRequest,
  ActResult,
  Policy,
  RehearseRequest,
  RehearseResult,
} from '../../src/core/policy/types';
import type { ChatMessage, ToolDefinition } from '../../src/core/protocol/types';
import { runTasks } from '../../src/core/runner/runner';
import { loadTaskFile } from '../../src/core/tasks/format/loader';
import { openTaskEnvironment } from '../../src/core/tasks/taskEnvironment';
import { ensureServerBundles, REPO } from '../../test/support/servers';
import { policySizedModel } from '../../test/support/testModels';
import { benchSize, registerBenchCase, timingStats } from '../registry';

/** Multi-turn example tasks: two user turns each, several calls. */
const TASKS = benchSize(['bank-0058', 'retail-0008'], ['retail-0008']);

interface Prompt {
  session: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  prefilled: number;
}

/**
 * Plays a real task as its reference solution does, while every act and rehearse prompt also goes
 * through the ONNX policy (with the episode's KV sessions): the episode is a real multi-turn one, and
 * the host encodes exactly the prompts a policy playing it would see.
 */
class TeacherForcedPolicy extends Disposable implements Policy {
  readonly prompts: Prompt[] = [];
  constructor(
    private readonly model: OnnxPolicy,
    private readonly reference: ReferencePolicy,
  ) {
    super();
  }
  get info() {
    return this.model.info;
  }
  async act(request: ActRequest): Promise<ActResult> {
    const encoded = await this.model.act({ ...request, maxTokens: 1 });
    this.prompts.push({
      session: request.session ?? '',
      messages: request.messages,
      tools: request.tools,
      prefilled: encoded.tokens.prompt - (encoded.tokens.reused ?? 0),
    });
    return this.reference.act(request);
  }
  async rehearse(request: RehearseRequest): Promise<RehearseResult> {
    const result = await this.model.rehearse({ ...request, maxTokens: 8 });
    this.prompts.push({
      session: request.session ?? '',
      messages: request.messages,
      tools: [],
      prefilled: result.tokens.prompt - (result.tokens.reused ?? 0),
    });
    return result;
  }
  endSession(session: string): void {
    this.model.endSession(session);
  }
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

registerBenchCase({
  name: 'policy: prefix reuse over multi-turn episodes',
  description: `${TASKS.join(' and ')} played in shadow mode against their real servers (acts from the reference solution, every act and rehearse prompt encoded by the policy host with the episode's KV sessions): prompt tokens the host prefilled per episode against the episode's distinct tokens (the tokens of the union of its prompts' prefixes, per session), and against no reuse at all`,
  targets: [{ fact: 'prefilled / distinct tokens (worst episode)', atMost: 1.2 }],
  async run() {
    ensureServerBundles();
    const modelDir = await policySizedModel();
    const loaded = await Promise.all(
      TASKS.map((id) => loadTaskFile(path.join(REPO, 'examples', 'tasks', `${id}.task.json`))),
    );
    const model = await OnnxPolicy.start({ modelDir, device: 'cpu' });
    const policy = new TeacherForcedPolicy(model, new ReferencePolicy(loaded.map((t) => t.task)));
    const runsDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-prefix-'));
    const started = performance.now();
    let summary;
    try {
      summary = await runTasks({
        runsDir,
        tasks: loaded,
        policy,
        openEnvironment: (t) => openTaskEnvironment(t),
        settings: { maxTokens: { act: 1, rehearse: 8 } },
      });
    } finally {
      model.dispose();
      await fs.rm(runsDir, { recursive: true, force: true });
    }
    const wallMs = performance.now() - started;
    if (summary.status !== 'completed' || summary.episodes.some((e) => e.success !== true))
      throw new Error(`the episodes did not play as their references: ${JSON.stringify(summary)}`);

    // The same tokenizer and chat template as the host, in this process.
    const engine = await OnnxEngine.load(modelDir, 'cpu');
    const facts: Record<string, number | string> = {};
    let worst = 0;
    try {
      for (const [i, id] of TASKS.entries()) {
        const episode = `e${i + 1}`;
        const prompts = policy.prompts.filter((p) => p.session.startsWith(`${episode}:`));
        const seen = new Map<string, number[][]>();
        let distinct = 0;
        let total = 0;
        let prefilled = 0;
        for (const p of prompts) {
          const ids = engine.encode(engine.renderChat(p.messages, p.tools));
          const earlier = seen.get(p.session) ?? [];
          distinct += ids.length - Math.max(0, ...earlier.map((e) => commonPrefix(e, ids)));
          earlier.push(ids);
          seen.set(p.session, earlier);
          total += ids.length;
          prefilled += p.prefilled;
        }
        const ratio = prefilled / distinct;
        worst = Math.max(worst, ratio);
        facts[`${id}: prompts (acts + rehearsals)`] = prompts.length;
        facts[`${id}: prompt tokens without reuse`] = total;
        facts[`${id}: distinct tokens`] = distinct;
        facts[`${id}: prefilled tokens`] = prefilled;
        facts[`${id}: prefilled / distinct`] = Number(ratio.toFixed(3));
      }
    } finally {
      await engine.dispose();
    }
    facts['prefilled / distinct tokens (worst episode)'] = Number(worst.toFixed(3));
    return { measurements: { 'both episodes, wall time': timingStats([wallMs]) }, facts };
  },
});
