import * as assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { JsonObject } from '../../src/core/base/json';
import { MAX_JSON_DEPTH } from '../../src/core/base/json';
import { readReplayRecording } from '../../src/core/env/replayRecording';
import { loadTasks } from '../../src/core/tasks/format/loader';
import { playReference } from '../../src/core/tasks/referencePlayer';
import { openTaskEnvironment } from '../../src/core/tasks/taskEnvironment';
import type { JudgeCheck, LoadedTask } from '../../src/core/tasks/format/taskFile';
import type { GradeOptions } from '../../src/core/tasks/checks/grade';
import type { Judge } from '../../src/core/tasks/checks/judge';
import { FIXTURES } from '../support/servers';
import { startJudgeServer } from '../support/judgeServer';
import { cliWrites } from '../support/cli';

const ENVACE = path.join(FIXTURES, 'import', 'envace-sample.json');
const CHAT = path.join(FIXTURES, 'import', 'chat-sample.jsonl');

const cli = cliWrites;

/** A deterministic judge: every item passes (the reference solution is what the items describe). */
const REFERENCE_JUDGE: Judge = {
  evaluate: () => Promise.resolve({ passed: true, detail: 'judge: the reference solution' }),
};

/** Plays every task's reference against its replay environment; returns the grades by id. */
async function playAll(tasks: LoadedTask[], options: GradeOptions = {}) {
  const grades = new Map<string, Awaited<ReturnType<typeof playReference>>>();
  for (const loaded of tasks) {
    const env = await openTaskEnvironment(loaded);
    try {
      assert.equal(env.source, 'replay');
      grades.set(loaded.task.id, await playReference(loaded.task, env, options));
    } finally {
      await env.close();
    }
  }
  return grades;
}

describe('tasks: importers round-trip recorded data into runnable tasks', function () {
  this.timeout(30_000);
  let out: string;
  beforeEach(async () => {
    out = await mkdtemp(path.join(os.tmpdir(), 'rehearsal-import-'));
  });
  afterEach(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('rehearse import envace: tasks, recordings and few-shot pairs; bad records reported with index and reason', async () => {
    const r = await cli(['import', 'envace', ENVACE, '--out', out]);
    assert.equal(r.code, 0, r.err.join('\n'));
    assert.match(
      r.out.join('\n'),
      /imported 2 tasks .* \(2 skipped, 4 few-shot pairs in examples.jsonl\)/,
    );
    assert.equal(r.err.length, 2);
    assert.match(
      r.err[0],
      /^record 1: skipped: message 2 tool_calls\[0\]: the arguments of get_weather are not valid JSON/,
    );
    assert.match(r.err[1], /^record 3: skipped: "extra_info" is missing/);

    const tasks = await loadTasks([path.join(out, 'tasks')]);
    assert.deepEqual(
      tasks.map((t) => t.task.id),
      ['envace-101', 'envace-103'],
    );
    const [multi, parallel] = tasks.map((t) => t.task);
    assert.equal(multi.system, 'You are a helpful travel assistant.');
    assert.deepEqual(
      multi.turns.map((t) => t.user),
      [
        "What's the weather in Oslo right now, in Celsius?",
        'And the forecast for the next 3 days?',
      ],
    );
    assert.deepEqual(
      multi.reference!.turns.map((t) => t.answer),
      ['It is -3 °C and snowing in Oslo.', 'Highs of -1, 0 and 2 °C over the next three days.'],
    );
    assert.deepEqual(multi.tools, ['get_weather', 'get_forecast']);

    // The checklist keeps EnvACE's fields, per user turn, with its weights.
    const judges = multi.checks.filter((c): c is JudgeCheck => c.kind === 'judge');
    assert.deepEqual(
      judges.map((j) => [j.turn, j.weight, j.focus_on]),
      [
        [0, 0.6, 'assistant.tool_calls'],
        [0, 0.4, 'assistant.content'],
        [1, 1, 'assistant.tool_calls'],
      ],
    );
    assert.deepEqual(judges[0].evidence, ['get_weather {"city": "Oslo", "unit": "C"}']);
    assert.deepEqual(judges[0].failure_examples, ['Calls get_weather for another city']);

    // Few-shot pairs come from the other records, never the task's own answers.
    assert.deepEqual(multi.examples, [
      {
        tool: 'get_weather',
        arguments: { city: 'Tokyo' },
        result: { city: 'Tokyo', temperature: 18, condition: 'clear' },
        text: '{"city": "Tokyo", "temperature": 18, "condition": "clear"}',
      },
    ]);
    assert.ok(
      !(parallel.examples ?? []).some((e) => (e.arguments as JsonObject)['city'] === 'Tokyo'),
    );
    const lines = (await readFile(path.join(out, 'examples.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => [l.task, l.tool]),
      [
        ['envace-101', 'get_weather'],
        ['envace-101', 'get_forecast'],
        ['envace-103', 'convert_currency'],
        ['envace-103', 'get_weather'],
      ],
    );

    // Parallel calls answered out of order are paired by tool_call_id.
    const rec = await readReplayRecording(path.join(out, 'recordings', 'envace-103.replay.json'));
    assert.deepEqual(
      rec.calls.map((c) => [c.tool, (c.response.text ?? [])[0].slice(0, 12)]),
      [
        ['convert_currency', '{"amount": 8'],
        ['get_weather', '{"city": "To'],
      ],
    );

    // The record's checklist is the task's checks, once: no call check derived beside it (issue 29).
    assert.deepEqual(
      multi.checks.map((c) => c.kind),
      ['judge', 'judge', 'judge'],
    );
    for (const [id, play] of await playAll(tasks))
      assert.ok(
        play.grade.checks.every((c) => c.passed === null) && play.grade.success === null,
        `${id}: judge items are not evaluated without a judge`,
      );
    const grades = await playAll(tasks, { judge: REFERENCE_JUDGE });
    for (const [id, play] of grades) {
      assert.equal(play.grade.success, true, `${id}: ${JSON.stringify(play.grade.checks)}`);
      assert.ok(
        play.transcript.turns.every((t) => t.calls.every((c) => c.outcome?.response)),
        'every reference call has a recorded answer',
      );
    }
  });

  it("--own-examples: each task's examples are every call of its own conversation, in order, with the text of its answer (EnvACE's few-shot)", async () => {
    const r = await cli(['import', 'envace', ENVACE, '--out', out, '--own-examples']);
    assert.equal(r.code, 0, r.err.join('\n'));
    const [multi] = (await loadTasks([path.join(out, 'tasks')])).map((t) => t.task);
    assert.deepEqual(multi.examples, [
      {
        tool: 'get_weather',
        arguments: { city: 'Oslo', unit: 'C' },
        result: { city: 'Oslo', temperature: -3, condition: 'snow' },
        text: '{"city": "Oslo", "temperature": -3, "condition": "snow"}',
      },
      {
        tool: 'get_forecast',
        arguments: { city: 'Oslo', days: 3 },
        result: {
          city: 'Oslo',
          days: [
            { day: 1, high: -1 },
            { day: 2, high: 0 },
            { day: 3, high: 2 },
          ],
        },
        text: '{"city": "Oslo", "days": [{"day": 1, "high": -1}, {"day": 2, "high": 0}, {"day": 3, "high": 2}]}',
      },
    ]);
  });

  it('rehearse import chat: OpenAI tool_calls and inline <tool_call> blocks; bad lines reported', async () => {
    const r = await cli(['import', 'chat', CHAT, '--out', out]);
    assert.equal(r.code, 0, r.err.join('\n'));
    assert.deepEqual(
      r.err.map((e) => e.replace(/\(.*/, '')),
      [
        'line 1: skipped: the line is not valid JSON ',
        'line 3: skipped: the conversation has no tool call, so there is nothing to replay',
      ],
    );
    const tasks = await loadTasks([path.join(out, 'tasks')]);
    assert.deepEqual(
      tasks.map((t) => t.task.id),
      ['chat-fin-001', 'chat-fin-003'],
    );
    const hermes = tasks[1].task;
    assert.deepEqual(hermes.reference!.turns[0].calls, [
      { name: 'get_market_cap', arguments: { ticker: 'MSFT' } },
      { name: 'get_market_cap', arguments: { ticker: 'NVDA' } },
    ]);
    assert.deepEqual(
      hermes.tools,
      ['get_market_cap'],
      'tools missing from the record are inferred from the calls',
    );
    const grades = await playAll(tasks);
    for (const [id, play] of grades)
      assert.equal(play.grade.reward, 1, `${id}: ${JSON.stringify(play.grade.checks)}`);
  });

  it('a record whose arguments nest 5,000 deep is skipped, and the good records after it are imported (both importers)', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const lines = (await readFile(CHAT, 'utf8')).split('\n').filter(Boolean);
    const record = JSON.parse(lines[0]) as {
      messages: { tool_calls?: { function: { arguments: unknown } }[] }[];
    };
    record.messages.find((m) => m.tool_calls)!.tool_calls![0].function.arguments = '@deep@';
    const withArguments = (args: string) => JSON.stringify(record).replace('"@deep@"', args);
    const chat = path.join(out, 'deep.jsonl');
    // As an object, and as the JSON text OpenAI's format carries.
    await writeFile(
      chat,
      [
        withArguments(`{"x":${deep}}`),
        withArguments(JSON.stringify(`{"x":${deep}}`)),
        ...lines,
      ].join('\n') + '\n',
    );
    const r = await cli(['import', 'chat', chat, '--out', path.join(out, 'chat')]);
    assert.equal(r.code, 0, r.err.join('\n'));
    assert.deepEqual(
      r.err.slice(0, 2),
      [0, 1].map(
        (i) =>
          `line ${i}: skipped: its arguments or results nest deeper than ${MAX_JSON_DEPTH} levels; a tool value that deep is not taken`,
      ),
    );
    assert.deepEqual(
      (await loadTasks([path.join(out, 'chat', 'tasks')])).map((t) => t.task.id),
      ['chat-fin-001', 'chat-fin-003'],
    );
    const envace = JSON.parse(await readFile(ENVACE, 'utf8')) as JsonObject[];
    const deepRecord = JSON.stringify(envace[0]).replace(
      /\\"city\\": \\"Oslo\\"/,
      `\\"city\\": ${deep}`,
    );
    assert.notEqual(deepRecord, JSON.stringify(envace[0]), 'the record carries the deep value');
    const file = path.join(out, 'deep.json');
    await writeFile(file, `[${deepRecord},${envace.map((e) => JSON.stringify(e)).join(',')}]`);
    const e = await cli(['import', 'envace', file, '--out', path.join(out, 'envace')]);
    assert.equal(e.code, 0, e.err.join('\n'));
    assert.match(e.err[0], /^record 0: skipped: its arguments or results nest deeper than/);
    await cli(['import', 'envace', ENVACE, '--out', path.join(out, 'plain')]);
    assert.deepEqual(
      await readdir(path.join(out, 'envace', 'tasks')),
      await readdir(path.join(out, 'plain', 'tasks')),
      'every task of the records after it',
    );
  });

  it('an imported task graded on a different solution fails: the derived checks bite', async () => {
    await cli(['import', 'chat', CHAT, '--out', out]);
    const [loaded] = await loadTasks([path.join(out, 'tasks', 'chat-fin-001.task.json')]);
    const env = await openTaskEnvironment(loaded);
    try {
      const wrong = {
        ...loaded.task,
        reference: {
          turns: [
            {
              calls: [{ name: 'get_stock_price', arguments: { ticker: 'MSFT' } }],
              answer: 'MSFT is at 400.',
            },
          ],
        },
      };
      const play = await playReference(wrong, env);
      assert.equal(play.transcript.turns[0].calls[0].outcome?.error?.code, 'NO_RECORDED_ANSWER');
      assert.equal(play.grade.success, false);
    } finally {
      await env.close();
    }
  });

  it('imported folders pass `rehearse verify`, their checklists graded by a judge', async () => {
    await cli(['import', 'envace', ENVACE, '--out', out]);
    const judge = await startJudgeServer({ answer: () => true });
    try {
      const r = await cli(['verify', path.join(out, 'tasks'), '--judge', judge.url]);
      assert.equal(r.code, 0, r.out.join('\n'));
      assert.match(r.out.join('\n'), /2 of 2 tasks pass their own checks/);
      const items = (await loadTasks([path.join(out, 'tasks')])).flatMap((t) => t.task.checks);
      assert.ok(items.length >= 2 && items.every((c) => c.kind === 'judge'));
      assert.equal(judge.asked.length, items.length, 'each checklist item was asked of the judge');
      const without = await cli(['verify', path.join(out, 'tasks')]);
      assert.equal(without.code, 1);
      assert.match(
        without.out.join('\n'),
        /judge items not evaluated: no judge endpoint is configured/,
      );
    } finally {
      await judge.close();
    }
  });

  it('exits 1 when nothing can be imported; without --out it writes into .rehearsal/imports/<file name>', async () => {
    const bad = path.join(out, 'bad.json');
    await writeFile(bad, JSON.stringify([{ nope: true }]));
    const r = await cli(['import', 'envace', bad, '--out', path.join(out, 'o')]);
    assert.equal(r.code, 1);
    assert.match(r.err[0], /^record 0: skipped: "extra_info" is missing/);
    assert.deepEqual(await readdir(path.join(out, 'o', 'tasks')), []);
    const cwd = process.cwd();
    process.chdir(out);
    try {
      const defaulted = await cli(['import', 'chat', CHAT]);
      assert.equal(defaulted.code, 0, defaulted.err.join('\n'));
      const into = path.join('.rehearsal', 'imports', path.basename(CHAT).replace(/\.jsonl$/, ''));
      assert.ok(defaulted.out.join('\n').includes(`into ${into} `), defaulted.out.join('\n'));
      assert.ok((await readdir(path.join(out, into, 'tasks'))).length > 0);
    } finally {
      process.chdir(cwd);
    }
  });
});
