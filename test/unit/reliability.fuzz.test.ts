// Fuzzing of every parser of outside input (act and rehearsal parsers, trace reader and the
// explorer's index, task loader, EnvACE and chat importers, annotation reader): generated and
// mutated inputs; no exception escapes, every failure is data or a coded error. A few hundred
// inputs each here; `npm run bench -- reliability` runs 100,000 each.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importChatText } from '../../src/core/tasks/import/chat';
import { importEnvaceText } from '../../src/core/tasks/import/envace';
import { findTaskFault } from '../../src/core/tasks/loader';
import { fuzzTargets, runFuzzTarget } from '../support/fuzz/targets';

/** Inputs per target in the normal suite (REHEARSAL_FUZZ_RUNS to change). */
const RUNS = Number(process.env['REHEARSAL_FUZZ_RUNS'] ?? 300);

describe('reliability: fuzzing the parsers of outside input', function () {
  this.timeout(120_000);
  let scratch = '';
  before(async () => { scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-fuzz-')); });
  after(() => fs.rm(scratch, { recursive: true, force: true }));

  for (const target of fuzzTargets()) {
    it(`${target.name}: ${RUNS} generated and mutated inputs, no uncoded exception`, async () => {
      const outcome = await runFuzzTarget(target, scratch, RUNS);
      assert.ok(!outcome.failed, outcome.report);
      assert.equal(outcome.runs, RUNS);
    });
  }
});

describe('reliability: inputs the fuzzer found', () => {
  const conversation = (messages: unknown[], tools?: unknown) => JSON.stringify({ id: 'c1', ...(tools ? { tools } : {}), messages });
  const answered = (name: string) => [
    { role: 'user', content: 'What is AAPL at?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name, arguments: '{"ticker":"AAPL"}' } }] },
    { role: 'tool', tool_call_id: 'x', content: '{"price": 227.52}' },
    { role: 'assistant', content: 'It is at 227.52.' },
  ];

  it('a message whose role is an object with a toString field is a skipped record, not a TypeError', () => {
    const r = importChatText(conversation([{ role: { toString: 'no' }, content: 'Hi' }, { role: 'assistant', content: 'Hello' }]), 'x.jsonl');
    assert.deepEqual(r.tasks, []);
    assert.match(r.skipped[0].reason, /message 0: a \(an object\) message comes before the first user message/);
    const deep = importChatText(`{"messages":[{"role":"user","content":"Hi"},{"role":${'['.repeat(20_000)}${']'.repeat(20_000)}}]}`, 'x.jsonl');
    assert.match(deep.skipped[0].reason, /unknown role \(a list\)/);
  });

  it('a conversation whose task would not load (a 70,000-character tool name) is skipped with the loader\'s reason, in both importers', () => {
    const chat = importChatText(conversation(answered('x'.repeat(70_000))), 'x.jsonl');
    assert.deepEqual(chat.tasks, []);
    assert.match(chat.skipped[0].reason, /^the task made from it would not load: \$\.tools\[0\] /);
    const record = { data_source: 'stocks', extra_info: { index: 0, tools: [], messages: answered('y'.repeat(70_000)) } };
    const envace = importEnvaceText(JSON.stringify([record]), 'x.json');
    assert.deepEqual(envace.tasks, []);
    assert.match(envace.skipped[0].reason, /^the task made from it would not load: /);
    // The same conversation with a normal tool name imports, and its task loads.
    const ok = importChatText(conversation(answered('get_stock_price')), 'x.jsonl');
    assert.equal(ok.tasks.length, 1);
    assert.equal(findTaskFault(ok.tasks[0].task), undefined);
  });
});
