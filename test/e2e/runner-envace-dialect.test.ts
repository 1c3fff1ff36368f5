// Runs in the envace parse dialect (`rehearse run --parse envace`), end to end against the real probe
// server: the turns EnvACE's Python takes as valid are calls here, their non-finite numbers reach the
// trace, the fidelity diff and the EnvACE export without breaking any of them, and the tool errors
// EnvACE names (TOOL_NOT_AVAILABLE, INVALID_PARAMETERS) keep its codes and bytes.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { EXIT } from '../../src/cli/io';
import { runCli } from '../../src/cli/program';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import { EndpointPolicy, toOpenAIMessages } from '../../src/core/policy/endpointPolicy';
import { ReferencePolicy } from '../../src/core/policy/referencePolicy';
import { envaceToolError } from '../../src/core/runner/parseDialect';
import { parseActOutput } from '../../src/core/protocol/actParser';
import { replayTrace } from '../../src/core/runner/replay';
import { parseErrorToolText, simulatorErrorText } from '../../src/core/runner/toolMessages';
import { parseTask } from '../../src/core/tasks/format/loader';
import type { LoadedTask } from '../../src/core/tasks/format/taskFile';
import type { EnvaceRecord } from '../../src/core/training/envaceExport';
import { exportEnvace } from '../../src/core/training/envaceExport';
import { ACT_ERROR_CASES, probeTask } from '../support/scriptedModel';
import { ensureServerBundles, fixtureServer } from '../support/servers';
import { startChatServer } from '../support/chatServer';
import { RecordingPolicy } from '../support/recordingPolicy';
import { readCheckedTrace } from '../support/traceChecks';
import { useRuns, useScriptedPolicy } from '../support/runnerFixture';
import { trainerPython } from '../support/trainerPython';

/** simulate_core/_error.py `format_tool_error`'s one line, run by Python: the bytes EnvACE writes. */
function formatToolError(code: string, message: string, details: object): string {
  const script =
    'import json,sys; a = json.load(sys.stdin); print(json.dumps({"error_tool_call": {"code": a[0], "message": a[1], "details": a[2]}}, ensure_ascii=True), end="")';
  return execFileSync(trainerPython(), ['-c', script], {
    input: JSON.stringify([code, message, details]),
    encoding: 'utf8',
  });
}

/** A task whose reference calls a tool no server offers. */
function refusedCallsTask(): LoadedTask {
  const id = 'envace-refusals';
  const task = parseTask(
    {
      version: 1,
      id,
      seed: 3,
      turns: [{ user: 'Look it up, please.' }],
      servers: { probe: fixtureServer('probe.mjs') },
      checks: [{ id: 'answered', kind: 'answer', contains: ['done'] }],
      reference: {
        turns: [{ calls: [{ name: 'lookup', arguments: { q: 'x' } }], answer: 'done' }],
      },
    },
    id,
  );
  return {
    task,
    file: path.join(path.dirname(fixtureServer('probe.mjs').args![0]), `${id}.task.json`),
    baseDir: process.cwd(),
  };
}

async function exported(traceFile: string): Promise<EnvaceRecord[]> {
  const records: EnvaceRecord[] = [];
  await exportEnvace([traceFile], {}, (r) => records.push(r));
  return records;
}

describe('runner: the envace parse dialect', function () {
  this.timeout(120_000);
  const { run } = useRuns();
  before(() => ensureServerBundles());

  it("a tool the task does not offer is EnvACE's TOOL_NOT_AVAILABLE (mcp_tool.py lines 481-490), recorded, read by the policy and exported in EnvACE's bytes", async () => {
    const task = refusedCallsTask();
    const policy = new RecordingPolicy(new ReferencePolicy([task.task]));
    const { summary, trace } = await run(policy, [task], { parse: 'envace' });
    const notAvailable = {
      code: 'TOOL_NOT_AVAILABLE',
      message:
        "tool name 'lookup' is not found. Please check your function call and use provided tools.",
      details: { tool: 'lookup', original_index: 'envace-refusals' },
    };
    assert.deepEqual(
      trace.actuals.map((a) => a.error),
      [notAvailable],
    );
    // What the policy read after the call: format_tool_error's JSON, byte for byte.
    const expected = formatToolError(notAvailable.code, notAvailable.message, notAvailable.details);
    assert.deepEqual(
      policy.acts[1].messages.filter((m) => m.role === 'tool').map((m) => m.content),
      [expected],
    );
    // export --format envace keeps the code instead of collapsing it into {"error": "..."}.
    const [record] = await exported(summary.traceFile);
    assert.deepEqual(
      record.extra_info.messages.filter((m) => m.role === 'tool').map((m) => m.content),
      [expected],
    );
  });

  it('a block holding [] is no call in EnvACE (tool_parser.py: no function calls, no error): the turn is the answer and is graded', async () => {
    // A real OpenAI-compatible endpoint whose model writes `\n<tool_call>\n[]\n</tool_call>`.
    const text = 'Nothing to look up.\n<tool_call>\n[]\n</tool_call>';
    const server = await startChatServer(() => text);
    const policy = new EndpointPolicy({ baseURL: server.url, model: 'm' });
    try {
      const task = probeTask('a', { maxTurns: 3 });
      const envace = await run(policy, [task], { parse: 'envace' });
      assert.deepEqual(
        envace.trace.turns.map((t) => t.parse.kind),
        ['final'],
        'one act: the answer',
      );
      assert.equal(envace.trace.ends[0].status, 'completed');
      assert.ok(
        (envace.trace.ends[0].checks ?? []).every((c) => c.passed !== null),
        'the turn was graded',
      );
      // The studio's dialect reads zero calls as a turn to act again, until the turn limit.
      const studio = await run(policy, [task], {});
      assert.ok(studio.trace.turns.length > 1, 'the studio asks again');
    } finally {
      policy.dispose();
      await server.close();
    }
  });

  it('the studio dialect keeps its own code for the same call', async () => {
    const task = refusedCallsTask();
    const { trace } = await run(new ReferencePolicy([task.task]), [task]);
    assert.deepEqual(
      trace.actuals.map((a) => a.error?.code),
      ['UNKNOWN_TOOL'],
    );
    assert.equal(trace.run.settings?.['parse'], 'studio');
  });

  it("arguments that are not an object are EnvACE's INVALID_PARAMETERS (mcp_tool.py lines 501-509), with Python's type name", async () => {
    const env = await openEnvironment(
      { probe: fixtureServer('probe.mjs') },
      { baseDir: process.cwd() },
    );
    try {
      await env.startEpisode(0);
      const outcome = await env.call('probe', ['x']);
      assert.equal(outcome.error?.code, 'INVALID_ARGUMENTS');
      const error = envaceToolError(outcome.error!, { name: 'probe', args: ['x'], taskId: 't' });
      const details = { tool: 'probe', parameters_type: 'list' };
      assert.deepEqual(error, {
        code: 'INVALID_PARAMETERS',
        message: "'parameters' is missing, empty, or not a JSON object.",
        details,
      });
      assert.equal(
        simulatorErrorText(error.code, error.message, error.details),
        formatToolError(error.code, error.message, details),
      );
      // Other errors keep the studio's code.
      assert.deepEqual(
        envaceToolError(
          { code: 'TOOL_TIMEOUT', message: 'm' },
          { name: 'probe', args: {}, taskId: 't' },
        ),
        { code: 'TOOL_TIMEOUT', message: 'm' },
      );
    } finally {
      await env.close();
    }
  });

  it("an act parse error fed back in the envace dialect quotes the block as tool_parser.py does (line 65: Python's strip)", () => {
    const text = '\n<tool_call>\n\u3000{"name": "a", "arguments": {"x": NaN,}}\u0085\n</tool_call>';
    const parse = parseActOutput(text, { dialect: 'envace' });
    assert.equal(parse.kind === 'error' && parse.error.code, 'JSON_DECODE_ERROR');
    // Printed by /usr/bin/python3: json.dumps({"error_tool_call": "One tool call can not be parsed as JSON: " + block.strip()}, ensure_ascii=True).
    const expected =
      '{"error_tool_call": "One tool call can not be parsed as JSON: {\\"name\\": \\"a\\", \\"arguments\\": {\\"x\\": NaN,}}"}';
    assert.equal(parseErrorToolText('JSON_DECODE_ERROR', '', text, 'envace'), expected);
  });

  it('an endpoint policy is sent an envace-only turn of the history as tool_calls, its numbers as the literals the model wrote', () => {
    const turn = '\n<tool_call>\n{"name": "probe", "arguments": {"x": NaN}}\n</tool_call>';
    const sent = toOpenAIMessages([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: turn },
      { role: 'tool', name: 'probe', content: '{"ok": true}' },
    ]);
    assert.deepEqual(sent.slice(1), [
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'probe', arguments: '{"x":NaN}' } },
        ],
      },
      { role: 'tool', content: '{"ok": true}', tool_call_id: 'call_1' },
    ]);
  });

  it('rehearse run --parse envace records the dialect in the run settings; another value is a usage error naming both', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rehearsal-parse-arg-'));
    try {
      const file = path.join(dir, 'refusals.task.json');
      await writeFile(file, JSON.stringify(refusedCallsTask().task));
      const out: string[] = [];
      const err: string[] = [];
      const io = { out: (s: string) => out.push(s), err: (s: string) => err.push(s), color: false };
      assert.equal(
        await runCli(
          [
            'run',
            file,
            '--policy',
            'reference',
            '--parse',
            'python',
            '--out',
            dir,
            '--no-progress',
          ],
          io,
        ),
        EXIT.usage,
      );
      assert.match(err.join('\n'), /--parse must be studio or envace, not "python"/);
      assert.equal(
        await runCli(
          [
            'run',
            file,
            '--policy',
            'reference',
            '--parse',
            'envace',
            '--out',
            dir,
            '--no-progress',
            '--json',
          ],
          io,
        ),
        0,
        err.join('\n'),
      );
      const { run: summary } = JSON.parse(out[out.length - 1]) as { run: { traceFile: string } };
      const trace = await readCheckedTrace(summary.traceFile);
      assert.equal(trace.run.settings?.['parse'], 'envace');
      assert.equal(trace.actuals[0].error?.code, 'TOOL_NOT_AVAILABLE');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('with a real model', () => {
    const scripted = useScriptedPolicy();

    it('1e999, NON_SERIALIZABLE_ARGUMENTS to the studio, is a valid call to EnvACE\'s json.loads: stored as {"$numberDouble": "Infinity"} and written back as Infinity', async () => {
      const hugenum = ACT_ERROR_CASES.NON_SERIALIZABLE_ARGUMENTS;
      // One turn: the scripted act is the only prompt here that is a row of the model's script (the
      // tool's answer to {"n": Infinity} is not), so the episode ends after that turn's call.
      const { summary, trace } = await run(scripted(), [probeTask(hugenum.case, { maxTurns: 1 })], {
        parse: 'envace',
      });
      assert.equal(summary.status, 'completed');
      assert.equal(trace.run.settings?.['parse'], 'envace');
      const [turn] = trace.turns;
      assert.equal(turn.text, hugenum.text);
      assert.deepEqual(
        turn.parse.kind === 'calls' && turn.parse.calls.map((c) => [c.name, c.arguments]),
        [['probe', { n: { $numberDouble: 'Infinity' } }]],
      );
      // The trace was read back against its schema; the call went to the real tool and was compared.
      assert.equal(trace.actuals.length, 1);
      assert.equal(trace.rehearsals.length, 1);
      assert.equal(trace.fidelities.length, 1);
      assert.deepEqual(trace.rehearsals[0].arguments, { n: { $numberDouble: 'Infinity' } });
      // A replay of that trace parses as the recorded run did.
      const replay = await replayTrace({
        source: summary.traceFile,
        runsDir: path.dirname(path.dirname(summary.traceFile)),
        policy: scripted(),
      });
      assert.equal((await readCheckedTrace(replay.traceFile)).run.settings?.['parse'], 'envace');
      const records = await exported(summary.traceFile);
      assert.equal(records.length, 1);
      const assistant = records[0].extra_info.messages.find(
        (m) => m.role === 'assistant' && m.tool_calls,
      );
      assert.equal(
        assistant?.tool_calls?.[0].function.arguments,
        '{"n":Infinity}',
        "the arguments string EnvACE's json.loads reads as inf",
      );
      assert.doesNotThrow(
        () => JSON.parse(JSON.stringify(records[0])),
        'the dataset itself stays standard JSON',
      );
    });

    it("a prompt that leaves no room for the reply ends the episode with EnvACE's LENGTH_EXCEEDED (envs.py lines 733-765), PROMPT_TOO_LONG in the studio dialect", async () => {
      const tooMany = { act: 1_000_000, rehearse: 64 };
      const envace = await run(scripted(), [probeTask('ok')], {
        parse: 'envace',
        maxTokens: tooMany,
      });
      const studio = await run(scripted(), [probeTask('ok')], { maxTokens: tooMany });
      assert.deepEqual(
        [envace.trace.ends[0].status, envace.trace.ends[0].error?.code],
        ['failed', 'LENGTH_EXCEEDED'],
      );
      assert.deepEqual(
        [studio.trace.ends[0].status, studio.trace.ends[0].error?.code],
        ['failed', 'PROMPT_TOO_LONG'],
      );
    });
  });
});
