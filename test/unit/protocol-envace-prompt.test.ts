// The envace rehearse prompt profile against EnvACE's own builders (issue 18, row 6): EnvACE
// 173e941, simulate_core/_builders.py (build_validation_user_prompt, build_few_shot_examples_lines,
// serialize_conversation_history), simulate_core/_prompt_loader.py and
// simulate_core/prompts/simulator/validation_system_instruction.txt, assembled as
// agent_system/agent/agents/checklist/tool_simulator_agent.py (_build_prompt) and envs.py
// (_build_info) do. The expected messages were printed by that code:
// test/fixtures/envace/rehearse_prompt_vectors.py.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/program';
import { readReplayRecording } from '../../src/core/env/replayRecording';
import { loadTasks } from '../../src/core/tasks/format/loader';
import { pythonJsonDumps, pythonNumber } from '../../src/core/base/pythonJsonDumps';
import type {
  RehearsePromptInput,
  RehearsePromptOptions,
} from '../../src/core/protocol/rehearsePrompt';
import {
  buildRehearsePrompt,
  parseRehearsePromptOptions,
} from '../../src/core/protocol/rehearsePrompt';
import type { ChatMessage } from '../../src/core/protocol/types';
import { envaceToolSchema } from '../../src/core/protocol/envaceTools';
import { fromRoot } from '../support/paths';

interface EnvaceVectors {
  envace_commit: string;
  cases: {
    name: string;
    input: { prompt: RehearsePromptInput; options: RehearsePromptOptions };
    expected: { messages: ChatMessage[] };
  }[];
  /** A record of a dataset file as EnvACE's tool executor loads it; the prompt input lacks its tools and examples. */
  dataset_cases: {
    name: string;
    input: {
      dataset: string;
      record: number;
      prompt: Omit<RehearsePromptInput, 'tools' | 'examples'>;
      options: RehearsePromptOptions;
    };
    expected: { messages: ChatMessage[] };
  }[];
}

const vectors = JSON.parse(
  readFileSync(fromRoot('test', 'fixtures', 'envace', 'rehearse-prompt.vectors.json'), 'utf8'),
) as EnvaceVectors;

describe("rehearse prompt profile envace: EnvACE's simulator messages byte for byte", () => {
  for (const c of vectors.cases) {
    it(c.name, () => {
      const got = buildRehearsePrompt(c.input.prompt, c.input.options);
      assert.equal(got.length, 2);
      assert.deepEqual(
        got.map((m) => m.role),
        c.expected.messages.map((m) => m.role),
      );
      assert.equal(got[0].content, c.expected.messages[0].content, 'system message');
      assert.equal(got[1].content, c.expected.messages[1].content, 'user message');
    });
  }

  for (const c of vectors.dataset_cases) {
    it(`${c.name}: the same bytes from the imported task`, async () => {
      const out = await mkdtemp(path.join(os.tmpdir(), 'rehearsal-envace-prompt-'));
      try {
        const errors: string[] = [];
        const code = await runCli(
          ['import', 'envace', fromRoot(c.input.dataset), '--out', out, '--own-examples'],
          { out: () => undefined, err: (s) => errors.push(s), color: false },
        );
        assert.equal(code, 0, errors.join('\n'));
        const [loaded] = await loadTasks([path.join(out, 'tasks')]);
        const recording = await readReplayRecording(
          path.join(out, 'recordings', `${loaded.task.id}.replay.json`),
        );
        const got = buildRehearsePrompt(
          { ...c.input.prompt, tools: recording.tools, examples: loaded.task.examples },
          c.input.options,
        );
        assert.deepEqual(got, c.expected.messages);
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    });
  }

  it('is chosen like the other profiles, and refuses the options EnvACE has no switch for', () => {
    assert.deepEqual(parseRehearsePromptOptions({ profile: 'envace', includeHistory: false }), {
      ok: true,
      options: { profile: 'envace', includeHistory: false },
    });
    const refused = parseRehearsePromptOptions({ profile: 'envace', maxExamples: 4 });
    assert.ok(
      !refused.ok &&
        refused.message.includes('rehearsePrompt.maxExamples does not apply to the envace profile'),
      JSON.stringify(refused),
    );
    const unknown = parseRehearsePromptOptions({ profile: 'simia' });
    assert.ok(
      !unknown.ok && unknown.message.includes('must be general, compact or envace'),
      JSON.stringify(unknown),
    );
  });
  it("shows an MCP tool's schema as the exported record holds it: the shape verl validates (issue 29)", () => {
    const tool = {
      name: 'set_limit',
      description: 'Set a limit.',
      parameters: {
        type: 'object',
        properties: {
          amount: { type: ['number', 'null'] },
          level: { enum: [1, 2, 3] },
          note: { anyOf: [{ type: 'null' }, { type: 'string' }], description: 'why' },
        },
      },
    };
    const [, user] = buildRehearsePrompt(
      { tools: [tool], call: { name: 'set_limit', arguments: { amount: 5 } } },
      { profile: 'envace' },
    );
    // What EnvACE's simulator reads is the record's tools: json.dumps(indent=0) of what the export wrote.
    const recorded = pythonJsonDumps([envaceToolSchema(tool)], { indent: 0 });
    assert.ok(
      user.content.startsWith(`Candidate tools (whitelist for this sample):\n${recorded}\n\n`),
      user.content.slice(0, 600),
    );
    assert.match(recorded, /"amount": \{\n"type": "number"\n\}/);
    assert.match(recorded, /"enum": \[\n"1",\n"2",\n"3"\n\]/);
    assert.match(recorded, /"required": \[\]/);
  });
});

describe("Python's json.dumps for the envace profile", () => {
  it('writes indent=0, ensure_ascii on and off, and numbers as Python does', () => {
    // json.dumps({"a": [1, {}], "b": "é\x7f"}, ensure_ascii=True, indent=0)
    assert.equal(
      pythonJsonDumps({ a: [1, {}], b: 'é\u007f' }, { indent: 0 }),
      '{\n"a": [\n1,\n{}\n],\n"b": "\\u00e9\\u007f"\n}',
    );
    // json.dumps({"b": "é😀\ud800"}, ensure_ascii=False)
    assert.equal(
      pythonJsonDumps({ b: 'é😀\ud800\n' }, { ensureAscii: false }),
      '{"b": "é😀\ud800\\n"}',
    );
    // [repr(x) for x in (1e-05, 0.0001, 1e+16, 123456789012345.6, -2.5e-07)], and the int 12
    assert.deepEqual([0.00001, 0.0001, 1e16, 123456789012345.6, -2.5e-7, 12].map(pythonNumber), [
      '1e-05',
      '0.0001',
      '1e+16',
      '123456789012345.6',
      '-2.5e-07',
      '12',
    ]);
  });
});
