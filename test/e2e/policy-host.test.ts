// The policy host process with real ONNX models: loading and validating model folders, device
// selection, streaming, batched samples, KV reuse, cancellation, and what a crash of the host does to
// a run and its trace.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { StudioError } from '../../src/core/base/errors';
import { PolicyHostClient } from '../../src/core/policy/hostClient';
import { threadOptions } from '../../src/core/policy/onnx/decoder';
import { OnnxPolicy } from '../../src/core/policy/onnxPolicy';
import type { ActRequest } from '../../src/core/policy/types';
import { GREEDY } from '../../src/core/policy/sampling/sampling';
import { parseRehearsalOutput } from '../../src/core/protocol/rehearsalParser';
import { buildRehearsePrompt } from '../../src/core/protocol/rehearsePrompt';
import type { ChatMessage } from '../../src/core/protocol/types';
import { loadTaskFile } from '../../src/core/tasks/format/loader';
import { ensurePolicyHostBundle, ensureServerBundles, REPO } from '../support/servers';
import { randomTestModel } from '../support/testModels';
import { scriptedModel, scriptRows } from '../support/scriptedModel';
import { RecordingPolicy } from '../support/recordingPolicy';
import { rejects } from '../support/errors';
import { useRuns } from '../support/runnerFixture';

/** This process's child processes (Linux: read from /proc), to see that a run leaves none behind. */
async function childProcesses(): Promise<Map<number, string>> {
  const children = new Map<number, string>();
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await fs.readFile(`/proc/${name}/stat`, 'utf8');
      // The command is in parentheses and may hold spaces; the parent's pid is the second field after it.
      const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(parent) !== process.pid || state === 'Z') continue;
      const cmdline = await fs.readFile(`/proc/${name}/cmdline`, 'utf8');
      children.set(Number(name), cmdline.split('\0').join(' ').trim());
    } catch {
      // Gone while being read.
    }
  }
  return children;
}

/** The children started since `before` that are still alive after up to `ms` (empty when all ended). */
async function childrenLeft(before: Map<number, string>, ms: number): Promise<string[]> {
  const until = Date.now() + ms;
  for (;;) {
    const left = [...(await childProcesses())]
      .filter(([pid]) => !before.has(pid))
      .map(([pid, cmd]) => `${pid} ${cmd}`);
    if (left.length === 0 || Date.now() > until) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CHAT: ChatMessage[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
const TOOLS = [
  {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];
const REHEARSE = buildRehearsePrompt({
  tools: TOOLS,
  history: CHAT,
  call: { name: 'get_weather', arguments: { city: 'Paris' } },
});

describe('policy host: a real ONNX model in its own process', function () {
  this.timeout(120_000);
  let modelDir = '';
  let scriptedDir = '';
  let policy: OnnxPolicy;
  const { run } = useRuns();

  before(async function () {
    this.timeout(300_000);
    ensureServerBundles();
    ensurePolicyHostBundle();
    modelDir = await randomTestModel(1);
    scriptedDir = await scriptedModel(); // trained here when this machine has none yet
    policy = await OnnxPolicy.start({ modelDir, device: 'auto' });
  });
  after(() => policy?.dispose());

  it('device auto on this machine: says why cuda and webgpu were not used, and runs on cpu', () => {
    const { device, attempts } = policy.device;
    assert.equal(device, 'cpu');
    assert.deepEqual(
      attempts.map((a) => [a.device, a.ok]),
      [
        ['cuda', false],
        ['webgpu', false],
        ['cpu', true],
      ],
    );
    const reason = (d: string) => attempts.find((a) => a.device === d)!.reason ?? '';
    assert.match(
      reason('cuda'),
      /CUDA provider libraries are not installed .*rehearse gpu install|no CUDA GPU or driver|CUDA 12 or cuDNN 9/,
    );
    assert.match(reason('webgpu'), /WebGPU adapter|Vulkan/);
    for (const a of attempts.filter((x) => !x.ok))
      assert.ok(a.reason!.length < 200 && !a.reason!.includes('\n'), `one short line: ${a.reason}`);
    assert.equal(policy.info.device, 'cpu');
  });

  // The scripted model on its row `ok/act`, not the random model: what a random model writes, and how
  // soon it ends, differ by machine (issue 39); the row's text is fixed and ASCII.
  it('streams an act turn token by token: one piece a token, making up the returned text', async () => {
    const row = (await scriptRows()).find((r) => r.id === 'ok/act')!;
    const scripted = await OnnxPolicy.start({ modelDir: scriptedDir, device: 'cpu' });
    try {
      const pieces: string[] = [];
      const result = await scripted.act({
        messages: row.messages,
        tools: row.tools!.map((t) => ({
          name: t.function.name,
          description: t.function.description,
          parameters: t.function.parameters,
        })),
        onToken: (d) => pieces.push(d),
      });
      assert.deepEqual([result.text, result.finish], [row.target, 'eos']);
      assert.equal(pieces.join(''), result.text);
      assert.equal(
        pieces.length,
        result.tokens.completion - 1,
        'a piece for each token but the end token',
      );
      assert.ok(pieces.length > 5, `${pieces.length} pieces`);
      assert.equal(result.tokens.prompt > 50, true);
    } finally {
      scripted.dispose();
    }
  });

  it('decodes n samples as one batch: greedy samples equal the single decode; seeded sampling is reproducible', async () => {
    const single = await policy.rehearse({ messages: REHEARSE, maxTokens: 24 });
    const batch = await policy.rehearse({ messages: REHEARSE, n: 3, maxTokens: 24 });
    assert.deepEqual(
      batch.samples.map((s) => s.text),
      [single.samples[0].text, single.samples[0].text, single.samples[0].text],
    );
    const sampling = { temperature: 1.5, seed: 11 };
    const a = await policy.rehearse({ messages: REHEARSE, n: 4, maxTokens: 16, sampling });
    const b = await policy.rehearse({ messages: REHEARSE, n: 4, maxTokens: 16, sampling });
    assert.deepEqual(
      a.samples.map((s) => s.text),
      b.samples.map((s) => s.text),
    );
    // That the samples differ is the sampler's property (test/unit/policy-sampling.test.ts), not
    // these random weights'.
    for (const sample of a.samples)
      assert.deepEqual(sample.parse, parseRehearsalOutput(sample.text), 'each sample is parsed');
  });

  it("keeps an episode's KV cache between turns: the next turn encodes only the new suffix; counters add up", async () => {
    const before = await policy.stats();
    const first = await policy.act({
      messages: CHAT,
      tools: TOOLS,
      session: 'kv-test',
      maxTokens: 8,
    });
    // A fixed answer, not the model's: re-encoding a random model's text (bytes that are not UTF-8
    // come back as U+FFFD) would make the suffix to encode depend on the weights.
    const next: ChatMessage[] = [
      ...CHAT,
      { role: 'assistant', content: 'It is 18 C in Paris.' },
      { role: 'user', content: 'And in Oslo?' },
    ];
    const second = await policy.act({
      messages: next,
      tools: TOOLS,
      session: 'kv-test',
      maxTokens: 8,
    });
    assert.equal(first.tokens.reused, 0);
    assert.ok(
      second.tokens.reused! >= first.tokens.prompt,
      `reused ${second.tokens.reused}, first prompt ${first.tokens.prompt}`,
    );
    assert.ok(
      second.tokens.prompt - second.tokens.reused! < 40,
      `prefilled ${second.tokens.prompt - second.tokens.reused!} tokens for a short new message`,
    );
    policy.endSession('kv-test');
    const third = await policy.act({
      messages: next,
      tools: TOOLS,
      session: 'kv-test',
      maxTokens: 8,
    });
    // An ended session is not resumed, but on the CPU its cache stays a donor of its prefix to the
    // next prompts (slotScheduler.ts): all of this one but its last token, which is fed for logits.
    assert.equal(
      third.tokens.reused,
      third.tokens.prompt - 1,
      "the ended session's cache lent its prefix",
    );
    assert.equal(
      third.text,
      second.text,
      'with or without the cache, greedy decoding writes the same text',
    );
    const after = await policy.stats();
    assert.equal(after.requests - before.requests, 3);
    assert.equal(
      after.promptTokens - before.promptTokens,
      first.tokens.prompt + second.tokens.prompt + third.tokens.prompt,
    );
    assert.equal(
      after.prefilled - before.prefilled + (after.reused - before.reused),
      after.promptTokens - before.promptTokens,
    );
  });

  it('cancels a generation: it stops early with finish "cancelled"; the host serves the next request', async () => {
    const host = await PolicyHostClient.start({ modelDir, device: 'cpu' });
    try {
      const ask = (tokens: number, signal?: AbortSignal) =>
        host.generate(
          {
            messages: CHAT,
            tools: TOOLS,
            n: 1,
            // The end token cannot finish it first, whatever these random weights write.
            maxTokens: tokens,
            minTokens: tokens,
            sampling: GREEDY,
          },
          undefined,
          signal,
        );
      // Cancelled as soon as it is sent: the cancel often reaches the host before the request is
      // dispatched (it used to be lost then, and the host decoded all 1500 tokens); and with a
      // signal aborted before the request (it used to be ignored).
      const abort = new AbortController();
      const generating = ask(1500, abort.signal);
      abort.abort();
      for (const result of [await generating, await ask(1500, AbortSignal.abort())]) {
        const [cancelled] = result.samples;
        assert.equal(cancelled.finish, 'cancelled');
        assert.ok(cancelled.completionTokens < 1500, `${cancelled.completionTokens} tokens`);
      }
      const [next] = (await ask(4)).samples;
      assert.deepEqual([next.finish, next.completionTokens], ['length', 4]);
    } finally {
      host.dispose();
    }
  });

  it('plays a built-in retail task in shadow mode: a real prompt of thousands of tokens, a schema-valid trace', async () => {
    const retail = await loadTaskFile(
      path.join(REPO, 'examples', 'tasks', 'retail-0000.task.json'),
    );
    const { summary, trace } = await run(policy, [retail], {
      maxTokens: { act: 48, rehearse: 48 },
    });
    assert.ok(['completed'].includes(summary.status));
    const turn = trace.turns[0];
    assert.ok(turn.tokens!.prompt > 1000, `${turn.tokens!.prompt} prompt tokens`);
    assert.ok(turn.tokens!.completion > 0 && turn.tokens!.completion <= 48);
    assert.equal(trace.ends.length, 1);
    assert.ok(trace.ends[0].checks!.length > 0, "graded with the task's checks");
  });

  describe('model folders', () => {
    let dir = '';
    before(async () => {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'model-folders-'));
    });
    after(async () => {
      await fs.rm(dir, { recursive: true, force: true });
    });

    async function brokenCopy(
      name: string,
      change: (folder: string) => Promise<void>,
    ): Promise<string> {
      const folder = path.join(dir, name);
      await fs.cp(modelDir, folder, { recursive: true });
      await change(folder);
      return folder;
    }

    it('threads: a small model decodes on one thread; weights in model.onnx_data count towards the size', async () => {
      const file = path.join(modelDir, 'onnx/model.onnx');
      assert.equal((await threadOptions(file, 'cpu', undefined)).intraOpNumThreads, 1);
      assert.equal((await threadOptions(file, 'cpu', 3)).intraOpNumThreads, 3);
      const large = await brokenCopy('external-weights', async (f) => {
        await fs.writeFile(path.join(f, 'onnx/model.onnx_data'), '');
        await fs.truncate(path.join(f, 'onnx/model.onnx_data'), 512 * 1024 * 1024); // sparse: no disk used
      });
      assert.deepEqual(
        await threadOptions(path.join(large, 'onnx/model.onnx'), 'cpu', undefined),
        {},
        "a 0.5 GB model gets onnxruntime's default threads",
      );
    });

    for (const file of [
      'config.json',
      'tokenizer.json',
      'tokenizer_config.json',
      'generation_config.json',
      'onnx/model.onnx',
    ]) {
      it(`a missing ${file} is named in the error (MODEL_FILE_MISSING)`, async () => {
        const folder = await brokenCopy(`no-${file.replace('/', '-')}`, (f) =>
          fs.rm(path.join(f, file)),
        );
        const err = await rejects(PolicyHostClient.start({ modelDir: folder, device: 'cpu' }));
        assert.equal(err.code, 'MODEL_FILE_MISSING');
        assert.ok(
          err.message.includes(`no ${file}`) || err.message.includes(`no usable ${file}`),
          err.message,
        );
      });
    }

    it('a config.json that is not JSON, and one without the layer count, are named (MODEL_FILE_BROKEN)', async () => {
      const notJson = await brokenCopy('bad-json', (f) =>
        fs.writeFile(path.join(f, 'config.json'), '{"model_type": "llama",'),
      );
      const err = await rejects(PolicyHostClient.start({ modelDir: notJson, device: 'cpu' }));
      assert.equal(err.code, 'MODEL_FILE_BROKEN');
      assert.match(err.message, /config\.json is not a valid JSON object/);
      const noLayers = await brokenCopy('no-layers', async (f) => {
        const config = JSON.parse(await fs.readFile(path.join(f, 'config.json'), 'utf8'));
        delete config.num_hidden_layers;
        await fs.writeFile(path.join(f, 'config.json'), JSON.stringify(config));
      });
      const err2 = await rejects(PolicyHostClient.start({ modelDir: noLayers, device: 'cpu' }));
      assert.equal(err2.code, 'MODEL_FILE_BROKEN');
      assert.match(err2.message, /config\.json lacks the number "num_hidden_layers"/);
    });

    it('an onnx/model.onnx that onnxruntime cannot read is a broken model file, whatever the device setting', async () => {
      const folder = await brokenCopy('garbage-onnx', (f) =>
        fs.writeFile(path.join(f, 'onnx', 'model.onnx'), Buffer.alloc(4096, 7)),
      );
      for (const device of ['cpu', 'auto'] as const) {
        const err = await rejects(PolicyHostClient.start({ modelDir: folder, device }));
        assert.equal(err.code, 'MODEL_FILE_BROKEN', device);
        assert.match(
          err.message,
          /onnx[/\\]model\.onnx cannot be loaded \(.*Protobuf parsing failed.*\); re-export the model/,
        );
      }
    });

    it('a folder whose config names external weights needs onnx/model.onnx_data', async () => {
      const folder = await brokenCopy('external', async (f) => {
        const config = JSON.parse(await fs.readFile(path.join(f, 'config.json'), 'utf8'));
        config['transformers.js_config'] = { use_external_data_format: { 'model.onnx': 1 } };
        await fs.writeFile(path.join(f, 'config.json'), JSON.stringify(config));
      });
      const err = await rejects(PolicyHostClient.start({ modelDir: folder, device: 'cpu' }));
      assert.equal(err.code, 'MODEL_FILE_MISSING');
      assert.match(err.message, /no onnx\/model\.onnx_data/);
    });

    it('a config.json that does not match its graph, or declares impossible sizes, is MODEL_FOLDER_INCONSISTENT before any token', async () => {
      const edited = (name: string, edit: (config: Record<string, number>) => void) =>
        brokenCopy(name, async (f) => {
          const config = JSON.parse(
            await fs.readFile(path.join(f, 'config.json'), 'utf8'),
          ) as Record<string, number>;
          edit(config);
          await fs.writeFile(path.join(f, 'config.json'), JSON.stringify(config));
        });
      const huge = await edited('layers-1e9', (c) => {
        c.num_hidden_layers = 1e9;
      });
      const err = await rejects(PolicyHostClient.start({ modelDir: huge, device: 'cpu' }));
      assert.equal(err.code, 'MODEL_FOLDER_INCONSISTENT');
      assert.match(
        err.message,
        /num_hidden_layers must be a whole number from 1 to 512, not 1000000000/,
      );
      const vocab = await edited('vocab-1e12', (c) => {
        c.vocab_size = 1e12;
      });
      assert.match(
        (await rejects(PolicyHostClient.start({ modelDir: vocab, device: 'cpu' }))).message,
        /vocab_size must be a whole number from 2 to 4,000,000, not 1000000000000/,
      );
      const fewer = await edited('layers-fewer', (c) => {
        c.num_hidden_layers -= 1;
      });
      const err2 = await rejects(PolicyHostClient.start({ modelDir: fewer, device: 'cpu' }));
      assert.equal(err2.code, 'MODEL_FOLDER_INCONSISTENT');
      assert.match(
        err2.message,
        /says num_hidden_layers \d+, but its graph model\.onnx has \d+ layers of cache inputs/,
      );
      // Found by the model folder fuzz target: a size as a string fell back to a default, and the
      // graph then failed on caches of the wrong shape with onnxruntime's own message.
      const text = await edited('kv-heads-text', (c) => {
        (c as Record<string, unknown>).num_key_value_heads = String(c.num_key_value_heads);
      });
      const err4 = await rejects(PolicyHostClient.start({ modelDir: text, device: 'cpu' }));
      assert.equal(err4.code, 'MODEL_FILE_BROKEN');
      assert.match(
        err4.message,
        /config\.json has "num_key_value_heads": "\d+"; it must be a number/,
      );
      const heads = await edited('kv-heads-other', (c) => {
        c.num_key_value_heads = c.num_attention_heads;
        c.head_dim = c.head_dim * 2;
      });
      const err5 = await rejects(PolicyHostClient.start({ modelDir: heads, device: 'cpu' }));
      assert.equal(err5.code, 'MODEL_FOLDER_INCONSISTENT');
      assert.match(
        err5.message,
        /says num_key_value_heads \d+, but its graph model\.onnx caches \d+/,
      );
      const wider = await edited('vocab-wider', (c) => {
        c.vocab_size *= 2;
      });
      const host = await PolicyHostClient.start({ modelDir: wider, device: 'cpu' });
      try {
        const err3 = await rejects(
          host.generate({
            messages: [{ role: 'user', content: 'hello' }],
            tools: [],
            n: 1,
            maxTokens: 4,
            sampling: GREEDY,
          }),
        );
        assert.equal(err3.code, 'MODEL_FOLDER_INCONSISTENT');
        assert.match(err3.message, /says vocab_size \d+, but its graph gives \d+ logits a token/);
      } finally {
        host.dispose();
      }
    });

    it("a tokenizer without a chat template is MODEL_FILE_BROKEN at start, not transformers.js's error at the first prompt", async () => {
      const bare = await brokenCopy('no-template', async (f) => {
        const config = JSON.parse(
          await fs.readFile(path.join(f, 'tokenizer_config.json'), 'utf8'),
        ) as Record<string, unknown>;
        delete config['chat_template'];
        await fs.writeFile(path.join(f, 'tokenizer_config.json'), JSON.stringify(config));
      });
      const err = await rejects(PolicyHostClient.start({ modelDir: bare, device: 'cpu' }));
      assert.equal(err.code, 'MODEL_FILE_BROKEN');
      assert.match(err.message, /has no chat template \(tokenizer_config\.json "chat_template"\)/);
    });

    it('a path that is not a folder says so (MODEL_NOT_FOUND)', async () => {
      const err = await rejects(
        PolicyHostClient.start({ modelDir: path.join(dir, 'nothing-here'), device: 'cpu' }),
      );
      assert.equal(err.code, 'MODEL_NOT_FOUND');
    });
  });

  it('killing the host while an act is pending ends the run with POLICY_HOST_CRASHED; the trace keeps every complete event', async () => {
    const victim = await OnnxPolicy.start({ modelDir, device: 'cpu' });
    let failure: Error | undefined;
    victim.onDidFail((e) => {
      failure = e;
    });
    let killed = false;
    /** Kills the host once the first act is sent to it: pending whatever the model would write. */
    class KillOnFirstAct extends RecordingPolicy {
      override act(request: ActRequest) {
        const pending = super.act(request);
        if (!killed) {
          killed = true;
          process.kill(victim.pid!, 'SIGKILL');
        }
        return pending;
      }
    }
    const watched = new KillOnFirstAct(victim);
    try {
      const retail = await loadTaskFile(
        path.join(REPO, 'examples', 'tasks', 'retail-0000.task.json'),
      );
      const { summary, trace } = await run(watched, [retail, retail], {
        maxTokens: { act: 384, rehearse: 64 },
      });
      assert.ok(killed, 'the host was killed with an act pending');
      assert.equal(summary.status, 'failed');
      assert.equal(summary.error?.code, 'POLICY_HOST_CRASHED');
      assert.match(summary.error!.message, /The policy host exited \(signal SIGKILL\)/);
      assert.deepEqual(
        summary.episodes.map((e) => e.status),
        ['failed'],
        'the run stops at the crash: the second episode never starts',
      );
      // The trace: every event up to the crash, the episode and the run closed with the code.
      assert.deepEqual(
        trace.events.map((e) => e.type),
        ['run', 'episode', 'episode.end', 'run.end'],
      );
      assert.deepEqual(
        [trace.ends[0].status, trace.ends[0].error?.code],
        ['failed', 'POLICY_HOST_CRASHED'],
      );
      assert.deepEqual(
        [trace.end.status, trace.end.error?.code],
        ['failed', 'POLICY_HOST_CRASHED'],
      );
      assert.equal((failure as StudioError | undefined)?.code, 'POLICY_HOST_CRASHED');
      // A dead host answers at once, with the same code.
      const again = await rejects(victim.act({ messages: CHAT, tools: TOOLS }));
      assert.equal(again.code, 'POLICY_HOST_CRASHED');
    } finally {
      victim.dispose();
    }
  });

  it('kill -9 of the host with 8 episodes in flight ends all 8 with POLICY_HOST_CRASHED; no ninth starts; the run ends within seconds; no process is left; the trace reads', async () => {
    const before = await childProcesses();
    const victim = await OnnxPolicy.start({ modelDir, device: 'cpu' });
    let killed = false;
    let killedAt = 0;
    /**
     * Holds each act until all 8 episodes have asked, sends the 8, and kills the host once the eighth
     * is sent: no act can end first, however soon the model would stop.
     */
    class KillWithEightPending extends RecordingPolicy {
      private readonly waiting: (() => void)[] = [];
      private sent = 0;
      override async act(request: ActRequest) {
        if (this.waiting.length < 8)
          await new Promise<void>((resolve) => {
            this.waiting.push(resolve);
            if (this.waiting.length === 8) for (const release of this.waiting) release();
          });
        const pending = super.act(request);
        if (++this.sent === 8) {
          killed = true;
          killedAt = Date.now();
          process.kill(victim.pid!, 'SIGKILL');
        }
        return pending;
      }
    }
    const watched = new KillWithEightPending(victim);
    try {
      const retail = await loadTaskFile(
        path.join(REPO, 'examples', 'tasks', 'retail-0000.task.json'),
      );
      const { summary, trace } = await run(
        watched,
        [retail],
        { episodesPerTask: 9, maxTokens: { act: 384, rehearse: 64 } },
        { concurrency: 8 },
      );
      const endedAfterMs = Date.now() - killedAt;
      assert.ok(killed, 'the host was killed with 8 acts in flight');
      // Not a speed figure: a run that waited on a dead host would hang until the episode timeout.
      assert.ok(endedAfterMs < 15_000, `the run ended ${endedAfterMs} ms after the kill`);
      // The host and the eight slots' MCP servers are all gone once the run has returned.
      assert.deepEqual(await childrenLeft(before, 3000), [], 'processes left after the run');
      assert.deepEqual([summary.status, summary.error?.code], ['failed', 'POLICY_HOST_CRASHED']);
      assert.deepEqual(
        summary.episodes.map((e) => [e.episodeId, e.status]),
        ['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8'].map((id) => [id, 'failed']),
        'the eight in flight end; the ninth never starts',
      );
      assert.equal(trace.episodes.length, 8);
      assert.deepEqual(
        trace.ends.map((e) => e.error?.code),
        Array(8).fill('POLICY_HOST_CRASHED'),
      );
      assert.deepEqual(
        [trace.end.status, trace.end.error?.code],
        ['failed', 'POLICY_HOST_CRASHED'],
      );
    } finally {
      victim.dispose();
    }
  });
});
