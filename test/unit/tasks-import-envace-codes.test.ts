// EnvACE's codes and numbers survive `rehearse import envace`, a replayed run and `export --format
// envace`: EnvACE reads its dataset with Python's json.load (mcp_tool.py line 207), so NaN is JSON
// there; a tool answer with an `error_tool_call` key is a failed call (envs.py lines 332-335) whose
// code (simulate_core/_error.py `format_tool_error`) must come back out byte for byte.
import * as assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/program';
import { MAX_OUTSIDE_CODE_LENGTH } from '../../src/core/protocol/codes';
import { ReferencePolicy } from '../../src/core/policy/referencePolicy';
import { loadTasks } from '../../src/core/tasks/format/loader';
import type { EnvaceRecord } from '../../src/core/training/envaceExport';
import { exportEnvace } from '../../src/core/training/envaceExport';
import { useRuns } from '../support/runnerFixture';

// Printed by /usr/bin/python3: format_tool_error("TOOL_NOT_AVAILABLE", "tool name 'refund' is not found.
// Please check your function call and use provided tools.", {"tool": "refund", "original_index": "7"}).
const NOT_AVAILABLE =
  '{"error_tool_call": {"code": "TOOL_NOT_AVAILABLE", "message": "tool name \'refund\' is not found. Please check your function call and use provided tools.", "details": {"tool": "refund", "original_index": "7"}}}';
const LONG_CODE = `CUSTOM_${'X'.repeat(193)}`;
const UNKNOWN = JSON.stringify({
  error_tool_call: { code: LONG_CODE, message: 'a code EnvACE does not have' },
});

/** An EnvACE dataset as Python's json.dump writes it: `NaN` unquoted inside an arguments string and as a bare value. */
const DATASET = `[{"data_source": "shop", "extra_info": {"original_index": 7, "tools": "[]", "score_floor": NaN, "messages": [
  {"role": "user", "content": "Refund order 5 and charge NaN."},
  {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "refund", "arguments": "{\\"order\\": 5}"}}]},
  {"role": "tool", "tool_call_id": "c1", "content": ${JSON.stringify(NOT_AVAILABLE)}},
  {"role": "assistant", "content": "", "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "charge", "arguments": "{\\"amount\\": NaN}"}}]},
  {"role": "tool", "tool_call_id": "c2", "content": ${JSON.stringify(UNKNOWN)}},
  {"role": "assistant", "content": "I could not refund it."}
]}}]`;

describe('tasks: EnvACE codes and non-finite numbers through import, replay and export', function () {
  this.timeout(60_000);
  const { run } = useRuns();
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rehearsal-envace-codes-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('import envace reads NaN as json.load does, flags error_tool_call answers and names the codes it kept (bounded)', async () => {
    const file = path.join(dir, 'shop.json');
    await writeFile(file, DATASET);
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['import', 'envace', file, '--out', path.join(dir, 'imported')], {
      out: (s) => out.push(s),
      err: (s) => err.push(s),
      color: false,
    });
    assert.equal(code, 0, err.join('\n'));
    assert.deepEqual(err, [], 'the record is not skipped');
    assert.match(
      out.join('\n'),
      new RegExp(
        `kept EnvACE tool errors verbatim: ${LONG_CODE.slice(0, MAX_OUTSIDE_CODE_LENGTH)} × 1, TOOL_NOT_AVAILABLE × 1$`,
        'm',
      ),
    );
    const recording = JSON.parse(
      await readFile(path.join(dir, 'imported', 'recordings', 'envace-7.replay.json'), 'utf8'),
    ) as { calls: unknown[] };
    assert.deepEqual(recording.calls, [
      {
        tool: 'refund',
        arguments: { order: 5 },
        response: { text: [NOT_AVAILABLE], isError: true },
      },
      {
        tool: 'charge',
        arguments: { amount: { $numberDouble: 'NaN' } },
        response: { text: [UNKNOWN], isError: true },
      },
    ]);
  });

  it('a run of the imported task in the envace dialect, exported --format envace, gives back the codes and NaN byte for byte', async () => {
    const tasks = await loadTasks([path.join(dir, 'imported', 'tasks')]);
    const { summary, trace } = await run(new ReferencePolicy(tasks.map((t) => t.task)), tasks, {
      parse: 'envace',
    });
    assert.deepEqual(
      trace.actuals.map((a) => a.response?.isError),
      [true, true],
    );
    const records: EnvaceRecord[] = [];
    await exportEnvace([summary.traceFile], {}, (r) => records.push(r));
    const messages = records[0].extra_info.messages;
    assert.deepEqual(
      messages.filter((m) => m.role === 'tool').map((m) => m.content),
      [NOT_AVAILABLE, UNKNOWN],
    );
    assert.deepEqual(
      messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.arguments),
      ['{"order":5}', '{"amount":NaN}'],
    );
  });
});
