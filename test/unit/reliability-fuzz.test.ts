// Fuzzing of every parser of outside input that runs in-process without starting one (act and
// rehearsal parsers, trace reader and the explorer's index, task loader, EnvACE and chat importers,
// annotation reader): generated and mutated inputs; no exception escapes, every failure is data or a
// coded error. A few hundred inputs each here; `npm run bench -- reliability` runs 100,000 each. The
// targets that start a process are fuzzed by test/e2e/reliability-fuzz-processes.test.ts.
import * as assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importChatText } from '../../src/core/tasks/import/chat';
import { importEnvaceText } from '../../src/core/tasks/import/envace';
import { findTaskFault, parseTask } from '../../src/core/tasks/format/loader';
import { StudioError } from '../../src/core/base/errors';
import { readTrace } from '../../src/core/trace/format/reader';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import { nested } from '../support/fuzz/mutate';
import { fromRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';
import { fuzzTargets, runFuzzTarget, runsFor } from '../support/fuzz/targets';

/** Inputs per target in the normal suite (REHEARSAL_FUZZ_RUNS to change). */
const RUNS = Number(process.env['REHEARSAL_FUZZ_RUNS'] ?? 300);

describe('reliability: fuzzing the parsers of outside input', function () {
  this.timeout(120_000);
  let scratch = '';
  before(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-fuzz-'));
  });
  after(() => fs.rm(scratch, { recursive: true, force: true }));

  for (const target of fuzzTargets().filter((t) => !t.startsProcesses)) {
    const runs = runsFor(target, RUNS);
    it(`${target.name}: ${runs} generated and mutated inputs, no uncoded exception`, async () => {
      const outcome = await runFuzzTarget(target, scratch, runs);
      assert.ok(!outcome.failed, outcome.report);
      assert.equal(outcome.runs, runs);
    });
  }
});

describe('reliability: inputs the fuzzer found', () => {
  const tmp = useTempDir('rehearsal-fuzz-found-');

  it("a last line that is only whitespace or a byte-order mark, without its newline, is blank to the explorer's index as to the reader, not a torn line", async () => {
    for (const tail of ['\ufeff', '   ', '\r']) {
      const file = path.join(tmp(), 'trace.jsonl');
      await fs.writeFile(file, tail);
      const read = await readTrace(file);
      const index = await TraceIndex.build(file);
      assert.deepEqual([read.events, read.skipped.length], [0, 0]);
      assert.equal(index.tornLastLine, undefined, JSON.stringify(tail));
      // The write goes on: the blank line ends and an event follows; both readers agree again.
      await fs.appendFile(
        file,
        '\n{"v":1,"type":"run.end","ts":"2026-11-29T12:00:00Z","runId":"r1","status":"completed"}\n',
      );
      await index.refresh();
      assert.deepEqual(
        [index.eventCount, index.skipped.length, index.tornLastLine],
        [1, 0, undefined],
      );
      assert.deepEqual(
        [(await readTrace(file)).events, (await readTrace(file)).skipped.length],
        [1, 0],
      );
    }
  });

  it('a task whose check kind is nested deeper than the stack is TASK_INVALID, not a RangeError', () => {
    const task = JSON.parse(
      readFileSync(fromRoot('examples', 'tasks', 'retail-0000.task.json'), 'utf8'),
    ) as { checks: { kind: unknown }[] };
    task.checks[0].kind = nested(100_000, 'state');
    assert.throws(
      () => parseTask(task, 'deep.task.json'),
      (e: unknown) =>
        e instanceof StudioError &&
        e.code === 'TASK_INVALID' &&
        /\$\.checks\[0\]\.kind is a list; it must be one of "state"/.test(e.message),
    );
  });

  it('EnvACE records with a checklist weight or an index that is an object with a toString field are read without calling it', () => {
    const record = (extra: Record<string, unknown>, weight: unknown) => ({
      data_source: 'weather',
      extra_info: {
        ...extra,
        tools: [],
        messages: [
          { role: 'user', content: 'Weather in Oslo?' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [
              {
                id: 'c',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'c', content: '{"t": -3}' },
          { role: 'assistant', content: 'It is -3.' },
        ],
        interaction_kwargs: { checklist_list: [[[{ question: 'Is the answer right?', weight }]]] },
      },
    });
    const r = importEnvaceText(
      JSON.stringify([
        record({ original_index: 7 }, { toString: 'no' }),
        record({ original_index: { toString: 'no' }, index: 3 }, 2),
      ]),
      'x.json',
    );
    assert.deepEqual(
      r.skipped.map((s) => [s.index, s.reason]),
      [[0, 'checklist item 0.0 has a weight that is not a number ≥ 0']],
    );
    assert.deepEqual(
      r.tasks.map((t) => t.task.id),
      ['envace-3'],
    );
  });
  const conversation = (messages: unknown[], tools?: unknown) =>
    JSON.stringify({ id: 'c1', ...(tools ? { tools } : {}), messages });
  const answered = (name: string) => [
    { role: 'user', content: 'What is AAPL at?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'x', type: 'function', function: { name, arguments: '{"ticker":"AAPL"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'x', content: '{"price": 227.52}' },
    { role: 'assistant', content: 'It is at 227.52.' },
  ];

  it('a message whose role is an object with a toString field is a skipped record, not a TypeError', () => {
    const r = importChatText(
      conversation([
        { role: { toString: 'no' }, content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
      ]),
      'x.jsonl',
    );
    assert.deepEqual(r.tasks, []);
    assert.match(
      r.skipped[0].reason,
      /message 0: a message with role an object comes before the first user message/,
    );
    const deep = importChatText(
      `{"messages":[{"role":"user","content":"Hi"},{"role":${'['.repeat(20_000)}${']'.repeat(20_000)}}]}`,
      'x.jsonl',
    );
    assert.match(deep.skipped[0].reason, /unknown role a list/);
  });

  it("a conversation whose task would not load (a 70,000-character tool name) is skipped with the loader's reason, in both importers", () => {
    const chat = importChatText(conversation(answered('x'.repeat(70_000))), 'x.jsonl');
    assert.deepEqual(chat.tasks, []);
    assert.match(chat.skipped[0].reason, /^the task made from it would not load: \$\.tools\[0\] /);
    const record = {
      data_source: 'stocks',
      extra_info: { index: 0, tools: [], messages: answered('y'.repeat(70_000)) },
    };
    const envace = importEnvaceText(JSON.stringify([record]), 'x.json');
    assert.deepEqual(envace.tasks, []);
    assert.match(envace.skipped[0].reason, /^the task made from it would not load: /);
    // The same conversation with a normal tool name imports, and its task loads.
    const ok = importChatText(conversation(answered('get_stock_price')), 'x.jsonl');
    assert.equal(ok.tasks.length, 1);
    assert.equal(findTaskFault(ok.tasks[0].task), undefined);
  });
});
