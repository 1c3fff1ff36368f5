// `rehearse export` for training: filters, a split by task, the summary, and the EnvACE tool
// dataset, which must carry the field names EnvACE's checklist dataset reads and round-trip through
// `rehearse import envace`.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readReplayRecording } from '../../src/core/env/replayRecording';
import { loadTasks } from '../../src/core/tasks/format/loader';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import type { EnvaceRecord } from '../../src/core/training/envaceExport';
import { envaceToolSchema } from '../../src/core/protocol/envaceTools';
import { toFunctionSchema } from '../../src/core/protocol/types';
import { ENVACE_REHEARSE_SYSTEM_PROMPT } from '../../src/core/protocol/envacePrompt';
import { buildRehearsePrompt } from '../../src/core/protocol/rehearsePrompt';
import { splitTasks } from '../../src/core/training/taskSplit';
import { SAMPLE_RUN_IDS, writeSampleWorkspace } from '../builders/sampleWorkspace';
import { rehearse } from '../support/cli';
import { assertGolden } from '../support/golden';
import { useTempDir } from '../support/tempDir';
import { fromRoot } from '../support/paths';

const readRows = async (file: string) =>
  (await fs.readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as DatasetRow);

describe('rehearse export for training', () => {
  const dir = useTempDir('training-export-');
  const workspace = async () => {
    await writeSampleWorkspace(dir());
    return dir();
  };

  it('prints what was exported: rows by role and source, tasks, and what was skipped', async () => {
    const r = await rehearse('export', await workspace(), '--out', path.join(dir(), 'rows.jsonl'));
    assert.equal(r.code, 0, r.err);
    assert.equal(
      r.out.split('\n')[0],
      'exported 12 act and 7 rehearse rows from 4 episodes of 4 tasks (act/demonstration 12, rehearse/actual 7)',
    );
    assert.equal((await readRows(path.join(dir(), 'rows.jsonl'))).length, 19);
  });

  it('--only-mismatches keeps the rehearse rows of calls whose rehearsal missed; --tools and --runs narrow further', async () => {
    const ws = await workspace();
    const out = path.join(dir(), 'm.jsonl');
    const r = await rehearse('export', ws, '--out', out, '--only-mismatches', '--json');
    assert.equal(r.code, 0, r.err);
    const rehearse_ = (await readRows(out))
      .filter((row) => row.role === 'rehearse')
      .map((row) => row.call);
    // e1: get_order_details guessed pending (delivered) and cancel_pending_order guessed success (error);
    // e2: an unparsable rehearsal of a call with an answer; e3's first call rehearsed a user the tool did not find.
    assert.deepEqual(rehearse_.sort(), ['e1.t2.c1', 'e1.t3.c1', 'e2.t3.c1', 'e3.t1.c1']);
    assert.equal(JSON.parse(r.out).filteredCalls, 4);

    const byTool = path.join(dir(), 't.jsonl');
    assert.equal(
      (
        await rehearse(
          'export',
          ws,
          '--out',
          byTool,
          '--only-mismatches',
          '--tools',
          'get_order_details',
          '--roles',
          'rehearse',
        )
      ).code,
      0,
    );
    assert.deepEqual((await readRows(byTool)).map((row) => row.call).sort(), [
      'e1.t2.c1',
      'e2.t3.c1',
    ]);

    const oneRun = path.join(dir(), 'r.jsonl');
    const r3 = await rehearse(
      'export',
      ws,
      '--out',
      oneRun,
      '--runs',
      SAMPLE_RUN_IDS.imagine,
      '--json',
    );
    assert.deepEqual(JSON.parse(r3.out).tasks, ['retail-train-0101']);
    assert.equal(JSON.parse(r3.out).skippedRuns, 1);
  });

  it('--split-by-task writes train and held-out files with every task on one side, the same for the same seed', async () => {
    const ws = await workspace();
    const out = path.join(dir(), 'rows.jsonl');
    const r = await rehearse('export', ws, '--out', out, '--split-by-task', '0.5', '--seed', '7');
    assert.equal(r.code, 0, r.err);
    const train = await readRows(path.join(dir(), 'rows.train.jsonl'));
    const heldOut = await readRows(path.join(dir(), 'rows.heldout.jsonl'));
    const tasksOf = (rows: DatasetRow[]) => new Set(rows.map((row) => row.task));
    assert.equal(tasksOf(heldOut).size, 2);
    assert.equal(tasksOf(train).size, 2);
    for (const t of tasksOf(heldOut)) assert.ok(!tasksOf(train).has(t), `${t} is on both sides`);
    assert.equal(train.length + heldOut.length, 19);
    assert.ok(
      r.out.includes(`held-out tasks (seed 7): ${[...tasksOf(heldOut)].sort().join(', ')}`),
      r.out,
    );
    assert.deepEqual(
      splitTasks(['a', 'b', 'c', 'd'], 0.5, 7),
      splitTasks(['d', 'c', 'b', 'a'], 0.5, 7),
    );
    const bad = await rehearse('export', ws, '--out', out, '--split-by-task', '1.5');
    assert.equal(bad.code, 2);
    assert.match(
      bad.err,
      /--split-by-task must be a number above 0 and below 1, not "1.5"\. It is the held-out fraction/,
    );
  });

  it('--format envace: the golden tool dataset, with the fields EnvACE reads, and an act that did not parse ending its record as in EnvACE', async () => {
    const out = path.join(dir(), 'envace.json');
    const r = await rehearse('export', await workspace(), '--out', out, '--format', 'envace');
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.out,
      /^exported 4 EnvACE records from 4 tasks\n[^]*\n1 record ending on an act that did not parse, with EnvACE's error_tool_call message [^\n]*\n {2}e2 \([\w-]+\): turn e2\.t2 \(JSON_DECODE_ERROR\)/,
    );
    const text = await fs.readFile(out, 'utf8');
    await assertGolden('envace-export.json', text);
    const records = JSON.parse(text) as EnvaceRecord[];
    for (const [i, rec] of records.entries()) {
      // agent_system/dataset/checklist_dataset.py: doc[prompt_key] with data.prompt_key=messages,
      // extra_info.index / original_index / tools (a JSON string or list) / interaction_kwargs.checklist_list.
      assert.ok(Array.isArray(rec.messages) && rec.messages.at(-1)?.role === 'user');
      assert.deepEqual([rec.extra_info.index, rec.extra_info.original_index], [i, i]);
      const tools = JSON.parse(rec.extra_info.tools) as {
        type: string;
        function: { name: string };
      }[];
      assert.ok(tools.every((t) => t.type === 'function' && typeof t.function.name === 'string'));
      const userTurns = rec.extra_info.messages.filter((m) => m.role === 'user').length;
      assert.equal(rec.extra_info.interaction_kwargs.checklist_list[0].length, userTurns);
      assert.ok(
        rec.extra_info.messages
          .filter((m) => m.role === 'tool')
          .every((m) => typeof m.tool_call_id === 'string' || m.name === 'error_tool_call'),
      );
      // envs.py: an assistant message opens with the caller's <think> block (enable_thinking=True).
      assert.ok(
        rec.extra_info.messages
          .filter((m) => m.role === 'assistant')
          .every((m) => m.content.startsWith('<think>')),
      );
    }
  });

  it('--format envace: every checklist item holds each key EnvACE reads by key, with its type (issue 18, row 1)', async () => {
    // EnvACE 173e941, agent_system/environments/env_package/checklist/interaction.py reads
    // item["required_for_next_turn"], item["focus_on"] and item["weight"]; checklist_reward.py
    // (get_input_prompt_v2) item['question'], ['focus_on'], ['pass_condition'], ['failure_examples'] and
    // evidence['snippet'] of item['evidence']. A missing key is a KeyError there: the turn scores 0.
    const out = path.join(dir(), 'envace.json');
    assert.equal(
      (await rehearse('export', await workspace(), '--out', out, '--format', 'envace')).code,
      0,
    );
    const records = JSON.parse(await fs.readFile(out, 'utf8')) as EnvaceRecord[];
    const items = records.flatMap((r) => r.extra_info.interaction_kwargs.checklist_list.flat(2));
    assert.ok(items.length >= 5);
    for (const item of items) {
      const i = item as unknown as Record<string, unknown>;
      assert.equal(typeof i['required_for_next_turn'], 'boolean');
      assert.ok(
        [
          'assistant.tool_calls',
          'assistant.content.thinking',
          'assistant.content.user_visible_reply',
          'tool.content',
        ].includes(i['focus_on'] as string),
      );
      assert.equal(typeof Number(i['weight']), 'number');
      assert.equal(typeof i['question'], 'string');
      assert.equal(typeof i['pass_condition'], 'string');
      assert.ok(
        Array.isArray(i['failure_examples']) &&
          (i['failure_examples'] as unknown[]).every((f) => typeof f === 'string'),
      );
      assert.ok(
        Array.isArray(i['evidence']) &&
          (i['evidence'] as Record<string, unknown>[]).every(
            (e) =>
              typeof e['snippet'] === 'string' &&
              Number.isInteger(e['turn']) &&
              Number.isInteger(e['step']),
          ),
      );
      assert.ok(typeof i['id'] === 'string' && i['id'] !== '');
    }
  });

  it('--format envace --split-by-task: the train and held-out files never share an original_index (issue 18, row 3)', async () => {
    // EnvACE 173e941, agent_system/dataset/checklist_dataset.py: env_kwargs.uuid = str(original_index),
    // and the simulator looks each call up by that uuid in one JSON serving train and validation.
    const out = path.join(dir(), 'envace.json');
    const r = await rehearse(
      'export',
      await workspace(),
      '--out',
      out,
      '--format',
      'envace',
      '--split-by-task',
      '0.5',
      '--seed',
      '1',
    );
    assert.equal(r.code, 0, r.err);
    const read = async (name: string) =>
      JSON.parse(await fs.readFile(path.join(dir(), name), 'utf8')) as EnvaceRecord[];
    const train = await read('envace.train.json');
    const heldOut = await read('envace.heldout.json');
    assert.ok(train.length > 0 && heldOut.length > 0, `${train.length} + ${heldOut.length}`);
    const originals = [...train, ...heldOut].map((rec) => rec.extra_info.original_index);
    assert.equal(
      new Set(originals).size,
      originals.length,
      `original_index repeats: ${originals.join(', ')}`,
    );
    // `index` is the record's position in its own file.
    assert.deepEqual(
      heldOut.map((rec) => rec.extra_info.index),
      heldOut.map((_, i) => i),
    );
  });

  it('EnvACE tools take the shape verl validates them against, or the record would be dropped silently (issue 18, row 2)', () => {
    // EnvACE 173e941, verl/tools/schemas.py: OpenAIFunctionToolSchema -> function {name: str,
    // description: str, parameters: {type: str, properties: {<name>: {type: str, description: str | None,
    // enum: list[str] | None}}, required: list[str]}}; ChecklistDataset._filter_invalid_tool_schemas
    // (agent_system/dataset/checklist_dataset.py) drops a record whose tools fail it.
    const verlAccepts = (t: ReturnType<typeof envaceToolSchema>): boolean => {
      const f = t.function as unknown as Record<string, unknown>;
      const p = f['parameters'] as Record<string, unknown>;
      if (
        typeof t.type !== 'string' ||
        typeof f['name'] !== 'string' ||
        typeof f['description'] !== 'string' ||
        typeof p['type'] !== 'string'
      )
        return false;
      if (
        !Array.isArray(p['required']) ||
        !(p['required'] as unknown[]).every((r) => typeof r === 'string')
      )
        return false;
      return Object.values(p['properties'] as Record<string, Record<string, unknown>>).every(
        (q) =>
          typeof q['type'] === 'string' &&
          (q['description'] === undefined ||
            q['description'] === null ||
            typeof q['description'] === 'string') &&
          (q['enum'] === undefined ||
            q['enum'] === null ||
            (Array.isArray(q['enum']) && q['enum'].every((e) => typeof e === 'string'))),
      );
    };
    const mcp = {
      name: 'search_orders',
      parameters: {
        type: 'object',
        properties: {
          status: { type: 'string', enum: ['pending', 'delivered'] },
          limit: { type: ['integer', 'null'], description: 'how many' },
          page: { enum: [1, 2, 3] },
          since: { anyOf: [{ type: 'null' }, { type: 'string', format: 'date' }] },
          filter: { properties: { tag: { type: 'string' } } },
          ids: { items: { type: 'string' }, description: 7 },
        },
      },
    };
    assert.equal(
      verlAccepts(toFunctionSchema(mcp as never) as never),
      false,
      'the schema as MCP gives it fails verl',
    );
    const t = envaceToolSchema(mcp as never);
    assert.ok(verlAccepts(t), JSON.stringify(t));
    const props = t.function.parameters['properties'] as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, v['type']])), {
      status: 'string',
      limit: 'integer',
      page: 'string',
      since: 'string',
      filter: 'object',
      ids: 'array',
    });
    assert.deepEqual(props['page']['enum'], ['1', '2', '3']);
    assert.deepEqual(t.function.parameters['required'], []);
    assert.deepEqual(props['ids']['items'], { type: 'string' }, 'other keys are kept');
  });

  it("an EnvACE item's required_for_next_turn survives import and export", async () => {
    const source = path.join(dir(), 'strict.json');
    const record = JSON.parse(
      await fs.readFile(fromRoot('test', 'fixtures', 'import', 'envace-sample.json'), 'utf8'),
    )[0] as {
      extra_info: { interaction_kwargs: { checklist_list: Record<string, unknown>[][][] } };
    };
    const first = record.extra_info.interaction_kwargs.checklist_list[0][0][0];
    first['required_for_next_turn'] = true;
    await fs.writeFile(source, JSON.stringify([record]));
    const imported = path.join(dir(), 'strict-import');
    assert.equal((await rehearse('import', 'envace', source, '--out', imported)).code, 0);
    const [task] = await loadTasks([path.join(imported, 'tasks')]);
    const judge = task.task.checks.find(
      (c) => c.kind === 'judge' && c.question === first['question'],
    );
    assert.equal(
      judge && 'required_for_next_turn' in judge ? judge.required_for_next_turn : undefined,
      true,
      'the importer keeps it',
    );
  });

  it('--rehearse-prompt {"profile": "envace"}: rehearse rows carry EnvACE\'s simulator prompt (issue 18, row 6)', async () => {
    const ws = await workspace();
    const out = path.join(dir(), 'envace-rows.jsonl');
    const r = await rehearse(
      'export',
      ws,
      '--out',
      out,
      '--roles',
      'rehearse',
      '--rehearse-prompt',
      '{"profile": "envace"}',
    );
    assert.equal(r.code, 0, r.err);
    const rows = await readRows(out);
    assert.equal(rows.length, 7);
    for (const row of rows) {
      assert.equal(row.messages[0].content, ENVACE_REHEARSE_SYSTEM_PROMPT);
      const user = row.messages[1].content;
      assert.match(
        user,
        /^Candidate tools \(whitelist for this sample\):\n\[\n\{\n"type": "function",\n"function": \{/,
      );
      assert.match(user, /\n\nCurrent conversation history:\nUser: /);
      assert.match(
        user,
        /\n\nCurrent tool to simulate:\n- name: \w+\n- input schema \(JSON Schema\):\n[^]*\n\n\/think$/,
      );
    }
    const bad = await rehearse(
      'export',
      ws,
      '--out',
      out,
      '--rehearse-prompt',
      '{"profile": "envace", "maxHistoryBytes": 600}',
    );
    assert.equal(bad.code, 2);
    assert.match(bad.err, /rehearsePrompt\.maxHistoryBytes does not apply to the envace profile/);
  });

  it("--rehearse-prompt envace on a studio task shows EnvACE's simulator what it sees for the exported record: its calls as few-shot, its tools as written (issue 29)", async () => {
    const ws = await workspace();
    const rowsFile = path.join(dir(), 'envace-rows.jsonl');
    const dataset = path.join(dir(), 'envace.json');
    const rows = async () => {
      const r = await rehearse(
        'export',
        ws,
        '--out',
        rowsFile,
        '--roles',
        'rehearse',
        '--rehearse-prompt',
        '{"profile": "envace"}',
      );
      assert.equal(r.code, 0, r.err);
      return readRows(rowsFile);
    };
    assert.equal((await rehearse('export', ws, '--out', dataset, '--format', 'envace')).code, 0);
    // What EnvACE's simulator is given for a record: its own conversation's calls (import envace
    // --own-examples reads them as EnvACE's _get_called_tools_and_response_static does, checked
    // against EnvACE's builders in protocol-envace-prompt.test.ts) and its tools as the record holds them.
    const imported = path.join(dir(), 'envace-own');
    assert.equal(
      (await rehearse('import', 'envace', dataset, '--out', imported, '--own-examples')).code,
      0,
    );
    const records = JSON.parse(await fs.readFile(dataset, 'utf8')) as EnvaceRecord[];
    const tasks = await loadTasks([path.join(imported, 'tasks')]);
    const section = (user: string, from: string, to: string) =>
      user.slice(user.indexOf(from), user.indexOf(to));
    let compared = 0;
    for (const row of await rows()) {
      const record = records.find(
        (r) => r.extra_info.studio_episode === row.episode && r.extra_info.studio_task === row.task,
      );
      // An episode the dataset leaves out, or one cut at an act that did not parse (EnvACE ends it
      // there, so its record holds fewer calls than the studio's episode, which went on).
      if (!record || record.extra_info.messages.some((m) => m.name === 'error_tool_call')) continue;
      const task = tasks.find((t) => t.task.id === `envace-${record.extra_info.original_index}`)!;
      const call = row.messages[1].content.match(/- name: (\w+)/)![1];
      const expected = buildRehearsePrompt(
        {
          tools: (
            await readReplayRecording(
              path.join(imported, 'recordings', `${task.task.id}.replay.json`),
            )
          ).tools,
          examples: task.task.examples,
          history: [],
          call: { name: call, arguments: {} },
        },
        { profile: 'envace' },
      )[1].content;
      for (const [from, to] of [
        ['Candidate tools', '\n\nPrevious tool calls'],
        ['Previous tool calls', '\n\nCurrent conversation history'],
      ] as const)
        assert.equal(
          section(row.messages[1].content, from, to),
          section(expected, from, to),
          `${row.id}: ${from}`,
        );
      compared++;
    }
    assert.ok(compared >= 3, `${compared} rows compared`);
  });

  it('--format envace round-trips through rehearse import envace: the same user turns, calls and actual responses', async () => {
    const out = path.join(dir(), 'envace.json');
    assert.equal(
      (await rehearse('export', await workspace(), '--out', out, '--format', 'envace')).code,
      0,
    );
    const imported = path.join(dir(), 'imported');
    const r = await rehearse('import', 'envace', out, '--out', imported);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /imported 4 tasks.*\(0 skipped/);
    const records = JSON.parse(await fs.readFile(out, 'utf8')) as EnvaceRecord[];
    const tasks = (await loadTasks([path.join(imported, 'tasks')])).sort((a, b) =>
      a.task.id.localeCompare(b.task.id, 'en', { numeric: true }),
    );
    assert.equal(tasks.length, records.length);
    for (const [i, { task }] of tasks.entries()) {
      const rec = records[i];
      assert.equal(task.id, `envace-${i}`);
      assert.deepEqual(
        task.turns.map((t) => t.user),
        rec.extra_info.messages.filter((m) => m.role === 'user').map((m) => m.content),
      );
      const calls = rec.extra_info.messages
        .flatMap((m) => m.tool_calls ?? [])
        .map((c) => ({ name: c.function.name, arguments: JSON.parse(c.function.arguments) }));
      assert.deepEqual(
        task.reference!.turns.flatMap((t) => t.calls),
        calls,
      );
      const recording = await readReplayRecording(
        path.join(imported, 'recordings', `${task.id}.replay.json`),
      );
      const answers = rec.extra_info.messages
        .filter((m) => m.role === 'tool' && m.name !== 'error_tool_call')
        .map((m) => m.content);
      assert.equal(recording.calls.length, answers.length);
      assert.equal(
        task.checks.filter((c) => c.kind === 'judge').length,
        calls.length,
        'one checklist item per reference call',
      );
    }
  });
});
