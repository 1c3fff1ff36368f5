// Parity of the Python trainer with transformers.js, which the policy host runs: the trainer's
// tokenizer gives the same ids, its chat template renders the same bytes, and its ONNX export
// computes the same logits and the same greedy continuation (with a KV cache here, without one in
// PyTorch). A model trained in Python therefore sees, at deployment, exactly what it was trained on.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PreTrainedModel, PreTrainedTokenizer, Tensor } from '@huggingface/transformers' with {
  'resolution-mode': 'import',
};
import type { TrainerEvent } from '../support/trainerPython';
import { trainerEvents, trainerPython } from '../support/trainerPython';

// transformers.js is an ES module; a dynamic import loads it from this CommonJS test file.
const transformers = import('@huggingface/transformers');

const REPO = path.resolve(__dirname, '../../..');
const MAX_NEW_TOKENS = 24;

interface Generation extends TrainerEvent {
  id: string;
  prompt_ids: number[];
  prompt_text?: string;
  ids: number[];
  logits?: number[];
  logits_shape?: number[];
}
type Message = { role: string; content: string; name?: string; tool_calls?: unknown[] };
interface Prompt {
  id: string;
  text?: string;
  messages?: Message[];
  tools?: unknown[];
  logits?: boolean;
}

const trainer = (args: string[]) => trainerEvents(...args);

const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather — any city, «quoted» & <tagged>',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        days: { type: 'integer', minimum: 1, maximum: 16 },
        tolerance: { type: 'number', minimum: 1e-7, default: 0.5 },
      },
      required: ['city'],
    },
  },
};
const CART = {
  type: 'function',
  function: { name: 'add_item', description: '', parameters: { type: 'object', properties: {} } },
};
const CALL = '\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris"}}\n</tool_call>';

const TEXTS = [
  'Hello world! The weather in Paris is 21 °C.',
  'naïve café — ünïcödé 😀👍🏽 中文 tabs\tand\n\nnewlines   spaces \r\n end',
  '<|im_start|>user\nhi<|im_end|>\n<tool_call>\n{"a": [1, 2.5e-7, null]}\n</tool_call><tool_response>x</tool_response>',
  '<execution_result>\n{"ok":true}\n</execution_result><think>hmm</think><|endoftext|>',
  'odd spaces:\u00a0\u3000\u2028\ufeff\x1c\x85 and "quotes" \\ backslashes {"k":"v"} 1234567890',
  '',
];

const CONVERSATIONS: { id: string; messages: Message[]; tools?: unknown[] }[] = [
  {
    id: 'first-call',
    messages: [
      { role: 'system', content: 'You are an agent.' },
      { role: 'user', content: 'Weather in Paris?' },
    ],
    tools: [WEATHER, CART],
  },
  { id: 'no-tools', messages: [{ role: 'user', content: 'Just chat 😀' }] },
  { id: 'empty-tools', messages: [{ role: 'user', content: 'hi' }], tools: [] },
  {
    id: 'multi-turn',
    tools: [WEATHER],
    messages: [
      { role: 'user', content: 'Weather in Paris, then Oslo?' },
      { role: 'assistant', content: CALL },
      { role: 'tool', name: 'get_weather', content: '{"city":"Paris","temperature":21}' },
      { role: 'tool', name: 'get_weather', content: 'second response' },
      { role: 'assistant', content: 'Paris is 21 °C. Now Oslo.' + CALL.replace('Paris', 'Oslo') },
      { role: 'tool', name: 'get_weather', content: '{"error": "unknown city"}' },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'thanks\ttab' },
    ],
  },
  {
    id: 'structured-calls',
    tools: [WEATHER],
    messages: [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              arguments: {
                city: 'Lima',
                days: 3,
                tolerance: 1.5e-7,
                nested: { list: [1, 2.25, 'é', null, true] },
              },
            },
          },
          { function: { name: 'add_item', arguments: '{"raw": 1}' } },
        ],
      },
      { role: 'tool', content: 'ok' },
      { role: 'system', content: 'a later system message' },
    ],
  },
  {
    id: 'rehearse',
    messages: [
      { role: 'system', content: 'You are a precise tool simulator.' },
      {
        role: 'user',
        content: 'Call to simulate:\nTool: get_weather\nArguments: {"city":"Quito"}',
      },
    ],
  },
];

describe('trainer parity with transformers.js (tokenizer, chat template, ONNX export)', function () {
  this.timeout(300_000);
  let dir = '';
  let generations = new Map<string, Generation>();
  let tokenizer: PreTrainedTokenizer;
  let model: PreTrainedModel;

  before(async function () {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'trainer-parity-'));
    await trainer(['test-model', '--out', path.join(dir, 'plain'), '--seed', '7']);
    const prompts: Prompt[] = [
      ...TEXTS.map((text, i) => ({ id: `text-${i}`, text, logits: i === 0 })),
      ...CONVERSATIONS.map((c) => ({ ...c, logits: c.id === 'multi-turn' })),
    ];
    await fs.writeFile(path.join(dir, 'prompts.json'), JSON.stringify(prompts));
    const [, events] = await Promise.all([
      trainer([
        'export',
        '--set',
        `model.path=${path.join(dir, 'plain')}`,
        '--set',
        `out_dir=${path.join(dir, 'external')}`,
        '--set',
        'export.external_data=always',
      ]),
      trainer([
        'generate',
        '--set',
        `model.path=${path.join(dir, 'plain')}`,
        '--set',
        `generate.prompts=${path.join(dir, 'prompts.json')}`,
        '--set',
        `generate.max_new_tokens=${MAX_NEW_TOKENS}`,
        // An end token does not stop the reference: every prompt is compared over MAX_NEW_TOKENS
        // tokens, however soon the random model would end.
        '--set',
        `generate.min_new_tokens=${MAX_NEW_TOKENS}`,
      ]),
    ]);
    generations = new Map(
      events
        .filter((e) => e.event === 'generation')
        .map((e) => [(e as Generation).id, e as Generation]),
    );
    const { AutoModelForCausalLM, AutoTokenizer, env } = await transformers;
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = dir + path.sep;
    tokenizer = await AutoTokenizer.from_pretrained('plain');
    model = await AutoModelForCausalLM.from_pretrained('plain', { device: 'cpu', dtype: 'fp32' });
  });

  after(async function () {
    await model?.dispose();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('gives the same token ids as the Python tokenizer, emoji and added tokens included', function () {
    TEXTS.forEach((text, i) => {
      const python = generations.get(`text-${i}`)!.prompt_ids;
      assert.deepEqual(tokenizer.encode(text), python, JSON.stringify(text));
      if (text) assert.equal(tokenizer.decode(python), text);
    });
    const special = [
      '<|endoftext|>',
      '<|im_start|>',
      '<|im_end|>',
      '<tool_call>',
      '</tool_call>',
      '<tool_response>',
      '</tool_response>',
      '<execution_result>',
      '</execution_result>',
      '<think>',
      '</think>',
    ];
    for (const token of special) assert.equal(tokenizer.encode(token).length, 1, token);
  });

  it('renders every conversation to the same bytes and ids as the Python chat template', function () {
    for (const c of CONVERSATIONS) {
      const python = generations.get(c.id)!;
      const options = { tools: c.tools, add_generation_prompt: true } as const;
      const text = tokenizer.apply_chat_template(c.messages, {
        ...options,
        tokenize: false,
      }) as string;
      assert.equal(text, python.prompt_text, c.id);
      const ids = tokenizer.apply_chat_template(c.messages, {
        ...options,
        tokenize: true,
        return_dict: false,
        return_tensor: false,
      }) as number[];
      assert.deepEqual(ids, python.prompt_ids, c.id);
    }
  });

  it('renders the compact-tools template (small policies) to the same bytes as Python', async function () {
    // A copy of the tokenizer whose tokenizer_config.json carries the compact template.
    const folder = path.join(dir, 'compact');
    await fs.mkdir(folder, { recursive: true });
    const python = await new Promise<{ template: string; texts: string[] }>((resolve, reject) => {
      const child = execFile(
        trainerPython(),
        [
          '-c',
          [
            'import json, sys',
            'from trainer.chat_template import COMPACT_TOOLS_TEMPLATE, render_chat',
            'conversations = json.load(sys.stdin)',
            'print(json.dumps({"template": COMPACT_TOOLS_TEMPLATE, "texts": [render_chat(COMPACT_TOOLS_TEMPLATE, c["messages"], c.get("tools"), True, {"eos_token": "<|im_end|>"}) for c in conversations]}))',
          ].join('\n'),
        ],
        { cwd: REPO, maxBuffer: 64 << 20, timeout: 60_000 },
        (err, out) => (err ? reject(err) : resolve(JSON.parse(out))),
      );
      child.stdin!.end(JSON.stringify(CONVERSATIONS));
    });
    for (const file of ['tokenizer.json', 'tokenizer_config.json'])
      await fs.copyFile(path.join(dir, 'plain', file), path.join(folder, file));
    const config = JSON.parse(
      await fs.readFile(path.join(folder, 'tokenizer_config.json'), 'utf8'),
    );
    await fs.writeFile(
      path.join(folder, 'tokenizer_config.json'),
      JSON.stringify({ ...config, chat_template: python.template }),
    );
    const { AutoTokenizer } = await transformers;
    const compact = await AutoTokenizer.from_pretrained('compact');
    CONVERSATIONS.forEach((c, i) => {
      const text = compact.apply_chat_template(c.messages, {
        tools: c.tools,
        add_generation_prompt: true,
        tokenize: false,
      }) as string;
      assert.equal(text, python.texts[i], c.id);
    });
    assert.ok(
      python.texts[0].includes(
        '\n- get_weather(city: string, days?: integer, tolerance?: number): Current weather',
      ),
      python.texts[0],
    );
  });

  async function logits(m: PreTrainedModel, ids: number[]): Promise<Float32Array> {
    const { Tensor } = await transformers;
    const inputIds = new Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
    const mask = new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
    const out = await m({ input_ids: inputIds, attention_mask: mask });
    return out.logits.data as Float32Array;
  }

  function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
    assert.equal(a.length, b.length);
    let d = 0;
    for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
    return d;
  }

  it('computes the first forward pass within 1e-4 of PyTorch', async function () {
    for (const id of ['text-0', 'multi-turn']) {
      const python = generations.get(id)!;
      const js = await logits(model, python.prompt_ids);
      assert.deepEqual(python.logits_shape, [
        python.prompt_ids.length,
        js.length / python.prompt_ids.length,
      ]);
      const diff = maxDiff(js, python.logits!);
      assert.ok(diff < 1e-4, `${id}: max |logit difference| ${diff}`);
    }
  });

  it('decodes greedily with its KV cache exactly as PyTorch does without one', async function () {
    const { Tensor } = await transformers;
    for (const [id, python] of generations) {
      const ids = python.prompt_ids;
      if (ids.length === 0) continue;
      const inputIds = new Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
      const mask = new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
      const out = (await model.generate({
        input_ids: inputIds,
        attention_mask: mask,
        max_new_tokens: MAX_NEW_TOKENS,
        do_sample: false,
        // No end token stops it (an empty list), as none stops the reference before
        // generate.min_new_tokens: both decode MAX_NEW_TOKENS tokens whatever the weights.
        eos_token_id: [],
      })) as Tensor;
      const generated = Array.from(out.data as BigInt64Array, Number).slice(ids.length);
      assert.equal(python.ids.length, MAX_NEW_TOKENS, `${id}: the reference stopped early`);
      assert.deepEqual(generated, python.ids, id);
    }
  });

  it('loads weights from onnx/model.onnx_data and computes the same logits', async function () {
    const { AutoModelForCausalLM } = await transformers;
    const external = await AutoModelForCausalLM.from_pretrained('external', {
      device: 'cpu',
      dtype: 'fp32',
    });
    try {
      const ids = generations.get('multi-turn')!.prompt_ids;
      assert.ok(maxDiff(await logits(external, ids), await logits(model, ids)) < 1e-5);
    } finally {
      await external.dispose();
    }
  });
});
