import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { JsonValue } from '../../src/core/base/json';
import { MAX_JSON_DEPTH } from '../../src/core/base/json';
import { MAX_ROLLOUT_LINE_BYTES } from '../../src/core/tasks/import/envaceRolloutFiles';
import type { FidelityReport } from '../../src/core/report/fidelityReport';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import type {
  CallActualEvent,
  CallRehearsalEvent,
  EpisodeEndEvent,
  EpisodeEvent,
  RunEvent,
  TraceEvent,
  TurnEvent,
} from '../../src/core/trace/format/schema';
import { rehearse } from '../support/cli';
import { useTempDir } from '../support/tempDir';

/*
 * A builder of EnvACE rollout dumps, in the format EnvACE (commit 173e941) writes, read from its code:
 * - one `<global_steps>.jsonl` per training step, one `json.dumps(entry, ensure_ascii=False)` line
 *   per batch row with `input`, `output`, `score`, `step`, then the reward manager's extra lists
 *   (verl/trainer/ppo/ray_trainer.py:699-721); the checklist reward manager adds `max_num_turns`
 *   and `num_checklists` (agent_system/reward_manager/checklist.py:85-91);
 * - `input`/`output` are the row's prompt and response decoded with skip_special_tokens=True
 *   (ray_trainer.py:1421-1423): Qwen3's `<|im_start|>`/`<|im_end|>` vanish, `<think>`,
 *   `<tool_call>` and `<tool_response>` stay;
 * - the caller's prompt grows by appending each message rendered after the BASE history
 *   (agent_system/environments/env_package/checklist/envs.py:581-731): the assistant message
 *   with `<think>` and its tool calls (arguments as tool_parser.py:94 wrote them), the tool
 *   messages in one `user` block of `<tool_response>`s, a next user message, then the generation
 *   prompt;
 * - a simulator row's prompt is VALIDATION_SIMULATOR_SYSTEM_INSTRUCTION and
 *   build_validation_user_prompt (simulate_core/_builders.py:147-212, arguments as
 *   `json.dumps(..., ensure_ascii=True, indent=0)`); the env's tool message is the parsed result
 *   `json.dumps(parsed, ensure_ascii=False)` (tool_simulator_agent.py:77-190, 286-293);
 * - rows come in `_balance_batch` order, with `adjust_batch` padding copies (utils.py:300-314).
 */

/** Python's `json.dumps` with its default separators. */
function pyJson(v: JsonValue): string {
  if (Array.isArray(v)) return `[${v.map(pyJson).join(', ')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${pyJson(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v);
}

/** Python's `json.dumps(obj, indent=0)` of a flat object (what the simulator prompt shows). */
function pyJsonIndent0(v: { [key: string]: JsonValue }): string {
  const entries = Object.entries(v);
  return entries.length
    ? `{\n${entries.map(([k, x]) => `${JSON.stringify(k)}: ${pyJson(x)}`).join(',\n')}\n}`
    : '{}';
}

interface Call {
  name: string;
  arguments: { [key: string]: JsonValue };
}
interface Act {
  think: string;
  content?: string;
  calls?: Call[];
}

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_order',
      description: 'Look up an order.',
      parameters: {
        type: 'object',
        properties: { order_id: { type: 'string' } },
        required: ['order_id'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'cancel_order',
      description: 'Cancel an order.',
      parameters: {
        type: 'object',
        properties: { order_id: { type: 'string' } },
        required: ['order_id'],
      },
    },
  },
];

/** Qwen3's system block with tools, decoded without special tokens. */
function systemBlock(system: string): string {
  return `system\n${system}\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>${TOOLS.map((t) => `\n${pyJson(t)}`).join('')}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>\n`;
}

/** The caller's raw response, as the model writes it. */
function actText(act: Act): string {
  const calls = (act.calls ?? [])
    .map(
      (c, i) =>
        `${i === 0 && !act.content ? '' : '\n'}<tool_call>\n${pyJson({ name: c.name, arguments: c.arguments })}\n</tool_call>`,
    )
    .join('');
  return `<think>\n${act.think}\n</think>\n\n${act.content ?? ''}${calls}`;
}

/** The assistant message as the template re-renders it after the generation prompt (envs.py:613-661). */
function renderedAct(act: Act): string {
  const content = act.content ?? '';
  const calls = (act.calls ?? [])
    .map(
      (c, i) =>
        `${(i === 0 && content) || i > 0 ? '\n' : ''}<tool_call>\n{"name": "${c.name}", "arguments": ${pyJson(c.arguments)}}\n</tool_call>`,
    )
    .join('');
  return `<think>\n${act.think}\n</think>\n\n${content}${calls}\n`;
}

/** One trajectory of the caller: its prompts grow turn by turn. */
class Trajectory {
  private prompt: string;
  readonly rows: { input: string; output: string }[] = [];
  constructor(system: string, user: string) {
    this.prompt = `${systemBlock(system)}user\n${user}\nassistant\n`;
  }
  /** The caller acts; `responses` are the tool messages EnvACE appends, `user` a next user message. */
  act(act: Act, after: { responses?: string[]; user?: string } = {}): this {
    this.rows.push({ input: this.prompt, output: actText(act) });
    this.prompt += renderedAct(act);
    if (after.responses?.length)
      this.prompt += `user${after.responses.map((r) => `\n<tool_response>\n${r}\n</tool_response>`).join('')}\n`;
    if (after.user !== undefined) this.prompt += `user\n${after.user}\n`;
    this.prompt += 'assistant\n';
    return this;
  }
}

const SIMULATOR_SYSTEM =
  "You are a precise tool simulator.\nYour task: validate the RL model's tool call against the candidate tools whitelist and the JSON schema, then generate the tool execution result.";

/** A Tool Simulator Agent row for one call (simulate_core/_builders.py:187-205). */
function simulatorRow(call: Call, output: string): { input: string; output: string } {
  const schema = JSON.stringify(
    TOOLS.find((t) => t.function.name === call.name)!.function.parameters,
  );
  const user = `get_order({"order_id": "W9"}) -> {"status": "shipped"}\n\nCurrent tool to simulate:\n- name: ${call.name}\n- input schema (JSON Schema):\n${schema}\n- arguments (JSON, parsed from caller's tool_call):\n${pyJsonIndent0(call.arguments)}`;
  return { input: `system\n${SIMULATOR_SYSTEM}\nuser\n${user}\nassistant\n`, output };
}

function simulated(result: JsonValue): string {
  return `<think>\nThe order exists.\n</think>\n\n<execution_result>\n${pyJson(result)}\n</execution_result>`;
}

/** A dump line: `_dump_generations`' keys in its order. */
function dumpLine(row: { input: string; output: string }, score: number, step: number): string {
  return pyJson({
    input: row.input,
    output: row.output,
    score,
    step,
    max_num_turns: 2,
    num_checklists: 1,
  });
}

const W1 = { name: 'get_order', arguments: { order_id: 'W1' } };
const W2 = { name: 'get_order', arguments: { order_id: 'W2' } };

/** Step 7 of a run: three samples of one prompt, one of another, as EnvACE dumps them. */
function stepSeven(): string[] {
  const a1 = new Trajectory('You are a support agent.', 'Where is order W1?')
    .act({ think: 'Look W1 up.', calls: [W1] }, { responses: [pyJson({ status: 'pending' })] })
    .act({ think: 'And W2.', calls: [W2] }, { responses: [pyJson({ status: 'delivered' })] })
    .act({ think: 'Answer.', content: 'W1 is pending.' });
  const a2 = new Trajectory('You are a support agent.', 'Where is order W1?')
    .act(
      { think: 'I should check W1.', calls: [W1] },
      { responses: [pyJson({ status: 'cancelled' })] },
    )
    .act({ think: 'Tell them.', content: 'W1 was cancelled.' }, { user: 'And order W2?' })
    .act({ think: 'Unknown.', content: 'I cannot find W2.' });
  // A third sample makes the same first call, and its rehearsal does not parse: EnvACE ends it there.
  const a3 = new Trajectory('You are a support agent.', 'Where is order W1?').act({
    think: 'W1 again.',
    calls: [W1],
  });
  const b1 = new Trajectory('You are a support agent.', 'Cancel W3.').act({
    think: 'Cancel it.',
    calls: [{ name: 'cancel_order', arguments: { order_id: 'W3' } }],
  });
  const sims = [
    simulatorRow(W1, simulated({ status: 'pending' })),
    simulatorRow(W1, simulated({ status: 'cancelled' })),
    // W2 was answered by EnvACE's tool layer (a cached dataset answer): no simulator row.
    simulatorRow(
      { name: 'cancel_order', arguments: { order_id: 'W3' } },
      '<think>\nHmm.\n</think>\n\nCancelled.',
    ),
    simulatorRow(W1, '<think>\nW1?\n</think>\n\n<execution_result>\n{}\n</execution_result>'),
  ];
  const lines = [
    dumpLine(a3.rows[0], 0, 7),
    dumpLine(a1.rows[2], 0.75, 7),
    dumpLine(sims[1], 0.25, 7),
    dumpLine(b1.rows[0], 0, 7),
    dumpLine(a2.rows[1], 0.25, 7),
    dumpLine(a1.rows[0], 0.75, 7),
    dumpLine(sims[0], 0.75, 7),
    dumpLine(a2.rows[0], 0.25, 7),
    dumpLine(sims[2], 0, 7),
    dumpLine(a1.rows[1], 0.75, 7),
    dumpLine(a2.rows[2], 0.25, 7),
    dumpLine(sims[3], 0, 7),
    // adjust_batch's padding copies of two rows
    dumpLine(a1.rows[0], 0.75, 7),
    dumpLine(sims[0], 0.75, 7),
  ];
  return lines;
}

async function traceEvents(file: string): Promise<TraceEvent[]> {
  const { events, skippedCount } = await readTraceEvents(file);
  assert.equal(skippedCount, 0, 'the written trace reads back whole');
  return events;
}

function tracesIn(out: string): string[] {
  return out
    .split('\n')
    .map((l) => /: (\S+trace\.jsonl)$/.exec(l)?.[1])
    .filter((f): f is string => f !== undefined);
}

describe('rehearse import envace-rollouts', () => {
  const tmp = useTempDir('rehearsal-rollouts-');

  async function rolloutDir(files: Record<string, string>): Promise<string> {
    const dir = path.join(tmp(), 'rollout_dumps');
    await fs.mkdir(dir, { recursive: true });
    for (const [name, text] of Object.entries(files))
      await fs.writeFile(path.join(dir, name), text);
    return dir;
  }

  it('a step of EnvACE rollouts becomes one trace: episodes, turns, rehearsed and actual responses, scores', async () => {
    const dir = await rolloutDir({ '7.jsonl': stepSeven().join('\n') + '\n' });
    const runs = path.join(tmp(), 'runs');
    const r = await rehearse('import', 'envace-rollouts', dir, '--out', runs, '--no-progress');
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.out,
      /^7\.jsonl: 14 rows → 4 episodes, 5 calls \(4 rehearsed, 1 actual\), 2 repeated rows read once: /m,
    );
    const [file] = tracesIn(r.out);
    assert.ok(file.startsWith(runs + path.sep), file);
    const events = await traceEvents(file);
    const run = events[0] as RunEvent;
    assert.equal(run.mode, 'imagine');
    assert.deepEqual(run.settings, {
      source: 'envace-rollouts',
      file: '7.jsonl',
      parse: 'envace',
      step: 7,
    });
    assert.equal(events[events.length - 1].type, 'run.end');

    const episodes = events.filter((e): e is EpisodeEvent => e.type === 'episode');
    const ends = new Map(
      events
        .filter((e): e is EpisodeEndEvent => e.type === 'episode.end')
        .map((e) => [e.episodeId, e]),
    );
    const turns = (id: string) =>
      events.filter((e): e is TurnEvent => e.type === 'turn' && e.episodeId === id);
    const byAnswer = (answer: string) =>
      episodes.find((e) => ends.get(e.episodeId)?.answer?.endsWith(answer))!;
    assert.equal(episodes.length, 4);

    const a1 = byAnswer('W1 is pending.');
    const a2 = byAnswer('I cannot find W2.');
    assert.equal(a1.taskId, a2.taskId, 'two samples of one prompt are one task (a GRPO group)');
    assert.equal(a1.instruction, 'Where is order W1?');
    assert.ok(a1.system?.startsWith('You are a support agent.'), a1.system);
    assert.deepEqual(
      a1.tools?.map((t) => t.name),
      ['get_order', 'cancel_order'],
    );

    const a1Turns = turns(a1.episodeId);
    assert.deepEqual(
      a1Turns.map((t) => t.parse.kind),
      ['calls', 'calls', 'final'],
    );
    assert.ok(a1Turns[0].text.includes('Look W1 up.'), "each turn keeps its own sample's text");
    const calls = (id: string) =>
      events.filter(
        (e) => (e.type === 'call.rehearsal' || e.type === 'call.actual') && e.episodeId === id,
      ) as (CallRehearsalEvent | CallActualEvent)[];
    const a1Calls = calls(a1.episodeId);
    assert.deepEqual(
      a1Calls.map((c) => [c.callId, c.type]),
      [
        [`${a1.episodeId}.t1.c1`, 'call.rehearsal'],
        [`${a1.episodeId}.t2.c1`, 'call.actual'],
      ],
    );
    assert.deepEqual((a1Calls[0] as CallRehearsalEvent).result, {
      ok: true,
      value: { status: 'pending' },
    });
    assert.deepEqual((a1Calls[0] as CallRehearsalEvent).arguments, { order_id: 'W1' });
    assert.deepEqual((a1Calls[1] as CallActualEvent).response, {
      text: ['{"status": "delivered"}'],
    });
    assert.equal((a1Calls[1] as CallActualEvent).source, 'replay');
    assert.deepEqual(
      [ends.get(a1.episodeId)!.status, ends.get(a1.episodeId)!.reward],
      ['completed', 0.75],
    );
    assert.match(
      ends.get(a1.episodeId)!.checks![0].detail!,
      /^EnvACE score 0\.75 = episode reward \/ \(1 checklists × 2 turns\), training step 7$/,
    );

    const a2Turns = turns(a2.episodeId);
    assert.ok(a2Turns[0].text.includes('I should check W1.'));
    assert.deepEqual((calls(a2.episodeId)[0] as CallRehearsalEvent).result, {
      ok: true,
      value: { status: 'cancelled' },
    });
    assert.equal(a2Turns[2].user, 'And order W2?', 'the next user message of a checklist turn');
    assert.equal(ends.get(a2.episodeId)!.reward, 0.25);

    const a3 = episodes.find((e) => turns(e.episodeId)[0].text.includes('W1 again.'))!;
    assert.equal(a3.taskId, a1.taskId);
    const a3Call = calls(a3.episodeId)[0] as CallRehearsalEvent;
    assert.deepEqual(
      [a3Call.text.includes('W1?'), !a3Call.result.ok && a3Call.result.code],
      [true, 'INVALID_EXECUTION_RESULT_TYPE'],
      "the last turn's call takes the simulator row no answered call took",
    );
    assert.deepEqual(
      [ends.get(a3.episodeId)!.status, ends.get(a3.episodeId)!.error?.code],
      ['failed', 'REHEARSAL_PARSE_ERROR'],
    );

    const b1 = episodes.find((e) => e !== a1 && e !== a2 && e !== a3)!;
    assert.notEqual(b1.taskId, a1.taskId);
    const b1Call = calls(b1.episodeId)[0] as CallRehearsalEvent;
    assert.deepEqual(
      [b1Call.type, b1Call.result.ok, !b1Call.result.ok && b1Call.result.code],
      ['call.rehearsal', false, 'NO_EXECUTION_RESULT_TAG_FOUND'],
    );
    assert.deepEqual(
      [ends.get(b1.episodeId)!.status, ends.get(b1.episodeId)!.reward],
      ['failed', 0],
    );

    // What the Trace Explorer and `rehearse report` read of it.
    const index = await TraceIndex.build(file);
    assert.deepEqual(
      [index.skippedCount, index.orphans, index.runEnd?.status],
      [0, 0, 'completed'],
    );
    assert.deepEqual(index.episodes.map((e) => e.turnIds.length).sort(), [1, 1, 3, 3]);
    assert.equal(
      index.call(`${b1.episodeId}.t1.c1`)?.rehearsalError,
      'NO_EXECUTION_RESULT_TAG_FOUND',
    );
    assert.ok(
      index.call(`${a1.episodeId}.t2.c1`)?.actual &&
        !index.call(`${a1.episodeId}.t2.c1`)?.rehearsal,
    );
    const report = JSON.parse((await rehearse('report', '--json', file)).out) as FidelityReport;
    assert.deepEqual(
      [report.episodes, report.calls, report.rehearsed, report.withActual, report.meanReward],
      [4, 5, 4, 1, (0.75 + 0.25 + 0 + 0) / 4],
    );
  });

  it('damaged lines are skipped and counted with their line numbers; the rest is imported', async () => {
    const good = stepSeven();
    const deep = `{"input": "x", "output": "y", "extra": ${'['.repeat(MAX_JSON_DEPTH + 5)}${']'.repeat(MAX_JSON_DEPTH + 5)}}`;
    const lines = [
      good[0],
      'not json at all',
      good[1],
      '{"input": 1, "output": "y"}',
      deep,
      ...good.slice(2),
      '[1, 2]',
      '\u00ff\u0000',
      '{"input": "torn',
    ];
    const dir = await rolloutDir({ '3.jsonl': lines.join('\n') });
    const r = await rehearse(
      'import',
      'envace-rollouts',
      dir,
      '--out',
      path.join(tmp(), 'runs'),
      '--no-progress',
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^3\.jsonl: 14 rows → 4 episodes, 5 calls \(4 rehearsed, 1 actual\)/m);
    assert.equal(
      r.err,
      `3.jsonl: 6 malformed lines skipped: line 2 (not valid JSON), line 4 (no "input" and "output" strings (not a row of EnvACE's _dump_generations)), line 5 (nested deeper than ${MAX_JSON_DEPTH} levels), line 18 (not a JSON object), line 19 (not valid JSON), and 1 more`,
    );
  });

  it('a score Python wrote as NaN is read as no score: the episode is imported, its reward null', async () => {
    const row = new Trajectory('You are a support agent.', 'Hi.').act({
      think: 'Greet.',
      content: 'Hello!',
    }).rows[0];
    const dir = await rolloutDir({
      '4.jsonl': dumpLine(row, 0, 4).replace('"score": 0,', '"score": NaN,') + '\n',
    });
    const r = await rehearse(
      'import',
      'envace-rollouts',
      dir,
      '--out',
      path.join(tmp(), 'runs'),
      '--no-progress',
    );
    assert.equal(r.code, 0, r.err);
    const end = (await traceEvents(tracesIn(r.out)[0])).find(
      (e): e is EpisodeEndEvent => e.type === 'episode.end',
    )!;
    assert.deepEqual(
      [end.status, end.reward, end.answer, end.checks![0].detail],
      [
        'completed',
        null,
        row.output,
        'EnvACE score absent or not finite = episode reward / (1 checklists × 2 turns), training step 4',
      ],
    );
  });

  it('a NaN call EnvACE executed and a score above 1 import whole: one trajectory, its rehearsal, the score as reward', async () => {
    // EnvACE's json.loads reads NaN (tool_parser.py), executes the call and renders it in the next
    // prompt; its reward, Σ passed weights per turn / turns, exceeds 1 when weights do.
    const nan = { name: 'get_order', arguments: { order_id: 'W5', limit: '@NaN@' } };
    const t = new Trajectory('You are a support agent.', 'Where is W5?')
      .act({ think: 'Look W5 up.', calls: [nan] }, { responses: [pyJson({ status: 'lost' })] })
      .act({ think: 'Answer.', content: 'W5 is lost.' });
    const lines = [
      dumpLine(t.rows[0], 1.5, 3),
      dumpLine(simulatorRow(nan, simulated({ status: 'lost' })), 1.5, 3),
      dumpLine(t.rows[1], 1.5, 3),
    ].map((l) => l.replace(/\\?"@NaN@\\?"/g, 'NaN'));
    assert.ok(
      lines.every((l) => /"limit\\?": NaN/.test(l)),
      'the caller, simulator and prompt rows hold NaN',
    );
    const dir = await rolloutDir({ '3.jsonl': lines.join('\n') + '\n' });
    const r = await rehearse(
      'import',
      'envace-rollouts',
      dir,
      '--out',
      path.join(tmp(), 'runs'),
      '--no-progress',
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^3\.jsonl: 3 rows → 1 episode, 1 call \(1 rehearsed, 0 actual\): /m);
    const events = await traceEvents(tracesIn(r.out)[0]);
    assert.equal((events[0] as RunEvent).settings?.['parse'], 'envace');
    const turns = events.filter((e): e is TurnEvent => e.type === 'turn');
    assert.deepEqual(
      turns.map((e) => e.parse.kind),
      ['calls', 'final'],
    );
    assert.deepEqual(turns[0].parse.kind === 'calls' && turns[0].parse.calls[0].arguments, {
      order_id: 'W5',
      limit: { $numberDouble: 'NaN' },
    });
    const rehearsal = events.find((e): e is CallRehearsalEvent => e.type === 'call.rehearsal');
    assert.deepEqual(rehearsal?.result, { ok: true, value: { status: 'lost' } });
    const ends = events.filter((e): e is EpisodeEndEvent => e.type === 'episode.end');
    assert.deepEqual(
      ends.map((e) => [e.status, e.reward]),
      [['completed', 1.5]],
    );
  });

  it('a line longer than the limit is skipped, not held in memory, and the file still imports', async () => {
    const good = stepSeven();
    const huge = `{"input": "${'x'.repeat(MAX_ROLLOUT_LINE_BYTES)}", "output": ""}`;
    const dir = await rolloutDir({ '1.jsonl': `${good.join('\n')}\n${huge}\n` });
    const r = await rehearse(
      'import',
      'envace-rollouts',
      dir,
      '--out',
      path.join(tmp(), 'runs'),
      '--no-progress',
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^1\.jsonl: 14 rows → 4 episodes/m);
    assert.equal(
      r.err,
      `1.jsonl: 1 malformed line skipped: line 15 (line too long (${huge.length} bytes, at most ${MAX_ROLLOUT_LINE_BYTES}))`,
    );
  });

  it('a folder without rollout files is a clear error, and writes nothing', async () => {
    const dir = await rolloutDir({ 'notes.txt': 'hello' });
    const runs = path.join(tmp(), 'runs');
    const r = await rehearse('import', 'envace-rollouts', dir, '--out', runs);
    assert.equal(r.code, 1);
    assert.equal(
      r.err,
      `rehearse: ${dir} holds no rollout files: EnvACE writes one <step>.jsonl per training step into trainer.rollout_data_dir; pass that folder.`,
    );
    await assert.rejects(fs.stat(runs), /ENOENT/);
    const missing = await rehearse('import', 'envace-rollouts', path.join(tmp(), 'nowhere'));
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^rehearse: Cannot read .*nowhere: no such folder\.$/);
  });

  it('--out that is a file, or under one, is refused before anything is read or written', async () => {
    const dir = await rolloutDir({ '1.jsonl': stepSeven().join('\n') + '\n' });
    const file = path.join(tmp(), 'a-file');
    await fs.writeFile(file, 'x');
    const r = await rehearse('import', 'envace-rollouts', dir, '--out', path.join(file, 'runs'));
    assert.equal(r.code, 2);
    assert.equal(
      r.err,
      `rehearse: --out ${path.join(file, 'runs')} cannot be created: ${file} is a file; pass a folder (each run is written into <folder>/<run id>/).`,
    );
    assert.deepEqual((await fs.readdir(tmp())).sort(), ['a-file', 'rollout_dumps']);
  });

  it('the rehearse CLI imports every step of a folder into .rehearsal/runs of the folder it runs in, and nothing else', async () => {
    const lines = stepSeven();
    const dir = await rolloutDir({
      '2.jsonl': lines.join('\n') + '\n',
      '10.jsonl': lines.slice(4, 8).join('\n') + '\n',
      README: 'not a rollout',
    });
    const workspace = path.join(tmp(), 'workspace');
    await fs.mkdir(workspace);
    const cli = path.join(__dirname, '..', '..', 'src', 'cli', 'main.js');
    const child = spawnSync(process.execPath, [cli, 'import', 'envace-rollouts', dir], {
      cwd: workspace,
      encoding: 'utf8',
    });
    assert.equal(child.status, 0, child.stderr);
    const out = child.stdout.trim().split('\n');
    assert.match(out[0], /^2\.jsonl: 14 rows → 4 episodes/);
    assert.match(out[1], /^10\.jsonl: 4 rows → /, 'steps in numeric order');
    assert.equal(
      out[2],
      `imported ${4 + Number(/→ (\d+) episode/.exec(out[1])![1])} episodes from 2 rollout files of ${dir} into ${path.join(workspace, '.rehearsal', 'runs')}`,
    );
    const runs = await fs.readdir(path.join(workspace, '.rehearsal', 'runs'));
    assert.equal(runs.length, 2);
    assert.ok(
      runs.some((id) => /-envace-step2-/.test(id)) && runs.some((id) => /-envace-step10-/.test(id)),
      runs.join(', '),
    );
    assert.deepEqual(await fs.readdir(workspace), ['.rehearsal']);
    assert.deepEqual((await fs.readdir(dir)).sort(), ['10.jsonl', '2.jsonl', 'README']);
    for (const file of tracesIn(child.stdout))
      assert.ok((await traceEvents(file)).some((e) => e.type === 'call.rehearsal'));
  });
});
