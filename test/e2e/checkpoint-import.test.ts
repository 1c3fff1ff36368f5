// Checkpoints both ways with EnvACE (issue 18, row 5). EnvACE's scripts/model_merger.py writes a
// Hugging Face Qwen3 folder through save_pretrained (config.json, safetensors shards with
// model.safetensors.index.json, tokenizer files); `rehearse import checkpoint` makes it a policy folder
// the studio runs, `rehearse export checkpoint` writes one EnvACE starts from. The folders here are
// random-weight ones written by the trainer's `test-checkpoint` (the embedded policy's small tokenizer).
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as ort from 'onnxruntime-node';
import { OnnxDecoder, forwardInputs } from '../../src/core/policy/onnx/decoder';
import { OnnxEngine } from '../../src/core/policy/onnx/engine';
import { emptyPast } from '../../src/core/policy/onnx/kvCache';
import { readModelFolder } from '../../src/core/policy/onnx/modelFolder';
import { GREEDY } from '../../src/core/policy/sampling/sampling';
import type { ToolDefinition } from '../../src/core/protocol/types';
import { toFunctionSchema } from '../../src/core/protocol/types';
import { ensurePolicyHostBundle, ensureServerBundles } from '../support/servers';
import { weatherRows } from '../support/trainingRows';
import { rehearse } from '../support/cli';
import { repoRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';
import type { TrainerEvent } from '../support/trainerPython';
import { trainerEvents, trainerPython } from '../support/trainerPython';

const run = promisify(execFile);

interface Generation extends TrainerEvent {
  id: string;
  prompt_ids: number[];
  ids: number[];
  logits?: number[];
}

const trainer = trainerEvents;

/** Tokens decoded per prompt on both sides: an end token stops neither before this many. */
const NEW_TOKENS = 20;

const PROMPTS = [
  { id: 'short', ids: [3062, 120, 7, 990, 3063, 3062, 55], logits: true },
  { id: 'long', ids: Array.from({ length: 40 }, (_, i) => (i * 73 + 19) % 3061), logits: true },
];

describe('import checkpoint: qwen3 and qwen2 Hugging Face folders become policy folders', function () {
  this.timeout(300_000);
  let folder = '';
  const dir = () => folder;
  const generations = new Map<string, Map<string, Generation>>();
  after(async () => {
    if (folder) await fs.rm(folder, { recursive: true, force: true });
  });

  before(async function () {
    folder = await fs.mkdtemp(path.join(os.tmpdir(), 'checkpoint-import-'));
    await fs.writeFile(path.join(dir(), 'prompts.json'), JSON.stringify(PROMPTS));
    for (const [name, extra] of [
      ['qwen3', ['--shards', '3']],
      ['qwen2', ['--model-type', 'qwen2', '--tied', '--shards', '2']],
    ] as const) {
      const source = path.join(dir(), `${name}-hf`);
      await trainer('test-checkpoint', '--out', source, '--seed', '4', ...extra);
      const r = await rehearse(
        'import',
        'checkpoint',
        source,
        '--out',
        path.join(dir(), `${name}-policy`),
      );
      assert.equal(r.code, 0, r.err);
      // The reference: PyTorch on the Hugging Face folder itself, no KV cache.
      const events = await trainer(
        'generate',
        '--set',
        `model.path=${source}`,
        '--set',
        `generate.prompts=${path.join(dir(), 'prompts.json')}`,
        '--set',
        `generate.max_new_tokens=${NEW_TOKENS}`,
        // Every prompt is compared over NEW_TOKENS tokens, however soon the random model would end
        // (the decoder's minTokens below does the same).
        '--set',
        `generate.min_new_tokens=${NEW_TOKENS}`,
      );
      generations.set(
        name,
        new Map(
          events
            .filter((e) => e.event === 'generation')
            .map((e) => [String(e['id']), e as Generation]),
        ),
      );
    }
    // The weights beside the graph (model.onnx_data, shared by the cascade graph), as past 2 GB.
    await trainer(
      'import-checkpoint',
      '--source',
      path.join(dir(), 'qwen2-hf'),
      '--out',
      path.join(dir(), 'qwen2-external-policy'),
      '--external-data',
      'always',
    );
    generations.set('qwen2-external', generations.get('qwen2')!);
  });

  it("writes the policy layout with progress lines, and the policy host reads qwen3's own head_dim", async () => {
    const r = await rehearse(
      'import',
      'checkpoint',
      path.join(dir(), 'qwen3-hf'),
      '--out',
      path.join(dir(), 'again'),
    );
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.errLines.slice(0, 3), [
      'read: 1/3 model-00001-of-00003.safetensors',
      'read: 2/3 model-00002-of-00003.safetensors',
      'read: 3/3 model-00003-of-00003.safetensors',
    ]);
    assert.match(
      r.out,
      /^imported \d+ parameters into .*again \(onnx\/model\.onnx, onnx\/model_cascade\.onnx, onnx\/model_slots\.onnx, tokenizer and chat template\)/,
    );
    const info = await readModelFolder(path.join(dir(), 'again'));
    const config = JSON.parse(
      await fs.readFile(path.join(dir(), 'again', 'config.json'), 'utf8'),
    ) as Record<string, unknown>;
    assert.equal(config['model_type'], 'qwen3');
    assert.deepEqual(
      [info.numKeyValueHeads, info.headDim, info.cascadeFile, info.slotsFile],
      [2, 16, 'onnx/model_cascade.onnx', 'onnx/model_slots.onnx'],
    );
    assert.notEqual(
      info.headDim,
      Number(config['hidden_size']) / Number(config['num_attention_heads']),
    );
  });

  for (const name of ['qwen3', 'qwen2', 'qwen2-external']) {
    it(`${name}: ONNX logits within 1e-4 of PyTorch, and greedy decoding with the KV cache (and the cascade graph) equals PyTorch without one`, async () => {
      const info = await readModelFolder(path.join(dir(), `${name}-policy`));
      const session = await ort.InferenceSession.create(path.join(info.dir, info.onnxFile), {
        executionProviders: ['cpu'],
        logSeverityLevel: 3,
      });
      const decoder = await OnnxDecoder.load(info, 'cpu', 1);
      try {
        let worst = 0;
        for (const prompt of PROMPTS) {
          const python = generations.get(name)!.get(prompt.id)!;
          const out = await session.run(
            forwardInputs(
              prompt.ids,
              0,
              1,
              emptyPast(info.numLayers, info.numKeyValueHeads, info.headDim, 1),
              { positionIds: true },
            ),
          );
          const logits = out['logits'].data as Float32Array;
          assert.equal(logits.length, python.logits!.length);
          for (let i = 0; i < logits.length; i++)
            worst = Math.max(worst, Math.abs(logits[i] - python.logits![i]));
          assert.equal(python.ids.length, NEW_TOKENS, `${prompt.id}: the reference stopped early`);
          const one = await decoder.generate({
            promptIds: prompt.ids,
            n: 1,
            maxTokens: NEW_TOKENS,
            minTokens: NEW_TOKENS,
            sampling: GREEDY,
          });
          assert.deepEqual(one.samples[0].ids, python.ids, prompt.id);
          const three = await decoder.generate({
            promptIds: prompt.ids,
            n: 3,
            maxTokens: NEW_TOKENS,
            minTokens: NEW_TOKENS,
            sampling: GREEDY,
          });
          for (const s of three.samples)
            assert.deepEqual(s.ids, python.ids, `${prompt.id}, cascade`);
        }
        assert.ok(worst < 1e-4, `max |logit difference| ${worst}`);
      } finally {
        await session.release();
        await decoder.dispose();
      }
    });
  }

  it("the studio renders the Qwen3 template's tools and tool calls as EnvACE does (enable_thinking=True)", async () => {
    // EnvACE: examples/drmas_trainer/run_checklist_share.sh sets +data.apply_chat_template_kwargs.enable_thinking=True;
    // with it, Qwen3's template adds nothing after the generation prompt. The studio passes no enable_thinking.
    const engine = await OnnxEngine.load(path.join(dir(), 'qwen3-policy'), 'cpu', 1);
    try {
      const tools: ToolDefinition[] = [
        {
          name: 'get_weather',
          description: 'Weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ];
      const messages = [
        { role: 'user', content: 'Paris?' },
        {
          role: 'assistant',
          content:
            '\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        },
        { role: 'tool', content: '{"t": 21}' },
      ];
      const text = engine.renderChat(messages as never, tools);
      // EnvACE's side: jinja2 set up as transformers does, with enable_thinking=True.
      const python = await run(
        trainerPython(),
        [
          '-c',
          [
            'import json, sys',
            'from trainer.chat_template import compile_template',
            'from trainer.commands.test_checkpoint import QWEN3_TEMPLATE',
            'a = json.loads(sys.argv[1])',
            'print(json.dumps(compile_template(open(QWEN3_TEMPLATE).read()).render(messages=a["m"], tools=a["t"], add_generation_prompt=True, enable_thinking=True)))',
          ].join('\n'),
          JSON.stringify({ m: messages, t: tools.map(toFunctionSchema) }),
        ],
        { cwd: repoRoot() },
      );
      assert.equal(text, JSON.parse(python.stdout) as string);
      assert.ok(
        text.startsWith('<|im_start|>system\n# Tools\n\nYou may call one or more functions'),
        text,
      );
      assert.ok(
        text.includes('\n<tools>\n{"type": "function", "function": {"name": "get_weather"'),
        text,
      );
      assert.ok(
        text.endsWith(
          '<|im_start|>user\nParis?<|im_end|>\n<|im_start|>assistant\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n{"t": 21}\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
        ),
        JSON.stringify(text),
      );
    } finally {
      await engine.dispose();
    }
  });

  it('refuses what is not a Hugging Face folder, an unsupported model_type, a missing shard and a shape mismatch', async () => {
    const source = path.join(dir(), 'qwen3-hf');
    const broken = async (name: string, change: (folder: string) => Promise<void>) => {
      const folder = path.join(dir(), name);
      await fs.cp(source, folder, { recursive: true });
      await change(folder);
      return rehearse('import', 'checkpoint', folder, '--out', path.join(dir(), `${name}-out`));
    };
    const config = JSON.parse(
      await fs.readFile(path.join(source, 'config.json'), 'utf8'),
    ) as Record<string, unknown>;
    const cases: [string, (folder: string) => Promise<void>, RegExp][] = [
      [
        'no-config',
        (f) => fs.rm(path.join(f, 'config.json')),
        /is not a Hugging Face folder \(no config\.json\)/,
      ],
      [
        'gpt2',
        (f) =>
          fs.writeFile(
            path.join(f, 'config.json'),
            JSON.stringify({ ...config, model_type: 'gpt2' }),
          ),
        /model_type 'gpt2' is not supported.*\(MODEL_UNSUPPORTED\)/,
      ],
      [
        'shard',
        (f) => fs.rm(path.join(f, 'model-00002-of-00003.safetensors')),
        /lacks 1 of the 3 shards .*model-00002-of-00003\.safetensors.*\(MODEL_MISSING\)/,
      ],
      [
        'shape',
        (f) =>
          fs.writeFile(
            path.join(f, 'config.json'),
            JSON.stringify({ ...config, num_key_value_heads: 4 }),
          ),
        /k_proj\.weight is \[32, 48\], config\.json makes it \[64, 48\].*\(WEIGHTS_MISMATCH\)/,
      ],
    ];
    for (const [name, change, message] of cases) {
      const r = await broken(name, change);
      assert.equal(r.code, 2, `${name}: ${r.err}`);
      assert.match(r.errLines.at(-1)!, message, name);
    }
    await fs.writeFile(path.join(dir(), 'a-file'), 'x');
    const out = await rehearse('import', 'checkpoint', source, '--out', path.join(dir(), 'a-file'));
    assert.equal(out.code, 2);
    assert.match(out.err, /--out \S+a-file is a file; pass a folder/);
    const exportErrors: [string[], RegExp][] = [
      [
        [path.join(dir(), 'nowhere')],
        /nowhere is not a folder; pass a policy folder, a training run's final\/ or one of its checkpoints/,
      ],
      [
        [path.join(dir(), 'qwen3-policy'), '--dtype', 'float8'],
        /--dtype must be float32, float16 or bfloat16, not "float8"/,
      ],
      [
        [path.join(dir(), 'qwen3-policy'), '--max-shard-bytes', '5GB'],
        /--max-shard-bytes must be a whole number of bytes/,
      ],
      [
        [path.join(dir(), 'qwen3-policy'), '--out', path.join(dir(), 'qwen3-policy')],
        /is the folder being read; pass a new folder/,
      ],
    ];
    for (const [args, message] of exportErrors) {
      const r = await rehearse(
        'export',
        'checkpoint',
        ...(args.includes('--out') ? args : [...args, '--out', path.join(dir(), 'export-out')]),
      );
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, message);
    }
  });
});

describe('EnvACE checkpoint pipeline: import, shadow run, fine-tune, export', function () {
  this.timeout(600_000);
  const dir = useTempDir('checkpoint-pipeline-');

  it('a Qwen3-shaped folder runs a task, trains a few steps and comes back as a Hugging Face folder whose tensors load', async () => {
    const source = path.join(dir(), 'envace-merge');
    await trainer('test-checkpoint', '--out', source, '--shards', '2', '--seed', '9');
    const policy = path.join(dir(), 'policy');
    const imported = await rehearse('import', 'checkpoint', source, '--out', policy);
    assert.equal(imported.code, 0, imported.err);

    // A random policy fails the task, but it must run and write a trace.
    ensurePolicyHostBundle();
    ensureServerBundles();
    const runs = path.join(dir(), 'runs');
    const shadow = await rehearse(
      'run',
      path.join(repoRoot(), 'examples', 'tasks', 'retail-0012.task.json'),
      '--policy',
      policy,
      '--mode',
      'shadow',
      '--device',
      'cpu',
      '--no-progress',
      '--out',
      runs,
      '--json',
    );
    assert.ok(shadow.code === 0 || shadow.code === 1, `${shadow.code}: ${shadow.err}`);
    const [runId] = await fs.readdir(runs);
    const trace = (await fs.readFile(path.join(runs, runId, 'trace.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            type: string;
            policy?: { kind: string; id: string };
            success?: boolean;
            status?: string;
          },
      );
    assert.deepEqual(
      trace.map((e) => e.type).filter((t) => t !== 'turn' && !t.startsWith('call')),
      ['run', 'episode', 'episode.end', 'run.end'],
    );
    assert.deepEqual(trace[0].policy && [trace[0].policy.kind, trace[0].policy.id], [
      'onnx',
      policy,
    ]);
    assert.ok(
      trace.some((e) => e.type === 'turn'),
      'the policy acted at least once',
    );
    assert.equal(trace.at(-1)!.status, 'completed');

    await fs.writeFile(path.join(dir(), 'rows.jsonl'), weatherRows());
    const spec = path.join(dir(), 'run.json');
    await fs.writeFile(
      spec,
      JSON.stringify({
        objective: 'sft',
        base: policy,
        data: { train: ['rows.jsonl'] },
        out_dir: 'training',
        hardware: { device: 'cpu', threads: 1 },
        hyperparameters: {
          train: {
            steps: 3,
            batch_size: 2,
            micro_batch_size: 2,
            checkpoint_every: 3,
            export_at_end: true,
          },
        },
      }),
    );
    const trained = await rehearse('train', '--config', spec, '--no-progress');
    assert.equal(trained.code, 0, trained.err);
    const final = path.join(dir(), 'training', 'final');

    const hf = path.join(dir(), 'back-to-envace');
    const exported = await rehearse(
      'export',
      'checkpoint',
      final,
      '--out',
      hf,
      '--dtype',
      'bfloat16',
    );
    assert.equal(exported.code, 0, exported.err);
    assert.match(
      exported.out,
      /^exported a qwen3 Hugging Face folder to .*back-to-envace \(model\.safetensors, bfloat16\)/,
    );
    const config = JSON.parse(await fs.readFile(path.join(hf, 'config.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.deepEqual(
      [config['model_type'], config['architectures'], config['torch_dtype']],
      ['qwen3', ['Qwen3ForCausalLM'], 'bfloat16'],
    );
    for (const file of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json'])
      await fs.access(path.join(hf, file));
    // The tensors load back: every one is the trained weight, rounded to bfloat16, and differs from the merge's.
    const check = await run(
      trainerPython(),
      [
        '-c',
        [
          'import sys, torch',
          'from trainer.model import safetensors',
          'back = safetensors.read_folder(sys.argv[1]); trained = torch.load(sys.argv[2] + "/pytorch_model.bin"); base = safetensors.read_folder(sys.argv[3])',
          'assert sorted(back) == sorted(base), (sorted(back), sorted(base))',
          'assert all(back[k].dtype == torch.bfloat16 and torch.equal(back[k], trained[k].bfloat16()) for k in back)',
          'print(sum(not torch.equal(back[k].float(), base[k]) for k in back), len(back))',
        ].join('\n'),
        hf,
        final,
        source,
      ],
      { cwd: repoRoot() },
    );
    const [changed, total] = check.stdout.trim().split(' ').map(Number);
    assert.ok(total > 10 && changed > total / 2, check.stdout);
  });
});

describe("a Qwen tokenizer.json (NFC, Oniguruma's \\p{L} \\p{N} \\s (?i:...)) encodes alike in the trainer and transformers.js", function () {
  this.timeout(120_000);
  const dir = useTempDir('qwen-tokenizer-');
  const TEXTS = [
    "IT'S it's it'ſx I'M we'LL you'Ve don't",
    'naïve café cafe\u0301 Å\u030a ﬁ ２３ ²½ 中文 日本語 한국어 Ελληνικά русский עברית العربية हिन्दी',
    'a\u3000\u3000y a\x1c\x1cy a\x85\x85y a\ufeff\ufeffy a\u00a0 b \u2028 \u2029 tab\t\tend',
    'x  \n\n y\r\n\r\nz   \n  w 12345 1,234.5 -7e-3',
    '<|im_start|>user\nWeather?<|im_end|>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><think>\nhm\n</think>',
    '😀👍🏽 emoji ZWJ 👩‍👩‍👧 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math',
  ];

  it('splits and encodes letters, numbers, spaces, contractions and decomposed accents to the same pieces and ids', async () => {
    const folder = path.join(dir(), 'qwen-shaped');
    const { stdout } = await run(
      trainerPython(),
      [
        '-c',
        [
          'import json, sys',
          'from trainer.tests.test_qwen_tokenizer import qwen_shaped',
          'from trainer.tokenizer import load_tokenizer',
          'tok = load_tokenizer(qwen_shaped(sys.argv[1]))',
          'texts = json.loads(sys.argv[2])',
          'b = tok.backend',
          'pieces = [[p for p, _ in b.pre_tokenizer.pre_tokenize_str(b.normalizer.normalize_str(t))] for t in texts]',
          'print(json.dumps({"ids": [tok.encode(t) for t in texts], "pieces": pieces}))',
        ].join('\n'),
        folder,
        JSON.stringify(TEXTS),
      ],
      { cwd: repoRoot() },
    );
    const python = JSON.parse(stdout) as { ids: number[][]; pieces: string[][] };
    const { AutoTokenizer, env } = await import('@huggingface/transformers');
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = dir() + path.sep;
    const tokenizer = await AutoTokenizer.from_pretrained('qwen-shaped');
    TEXTS.forEach((text, i) =>
      assert.deepEqual(
        tokenizer.encode(text, { add_special_tokens: false }),
        python.ids[i],
        JSON.stringify(text),
      ),
    );
    // The pre-tokenizer's pieces themselves (ids alone would hide a split between two bytes no merge joins).
    const inner = (
      tokenizer as unknown as {
        _tokenizer: {
          normalizer: { normalize(t: string): string };
          pre_tokenizer: { pre_tokenize_text(t: string): string[] };
        };
      }
    )._tokenizer;
    TEXTS.slice(0, 4).forEach((text, i) =>
      assert.deepEqual(
        inner.pre_tokenizer.pre_tokenize_text(inner.normalizer.normalize(text)),
        python.pieces[i],
        JSON.stringify(text),
      ),
    );
  });
});
