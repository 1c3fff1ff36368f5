import * as assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { StudioError } from '../../src/core/base/errors';
import type { JsonObject } from '../../src/core/base/json';
import { MAX_JSON_DEPTH } from '../../src/core/base/json';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import { RESULT_LIMIT_BYTES } from '../../src/core/env/resultContent';
import type { ToolEnvironment } from '../../src/core/env/toolEnvironment';
import type { CallOutcome } from '../../src/core/env/types';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import { validateTraceEvent } from '../../src/core/trace/format/validate';
import { TraceWriter } from '../../src/core/trace/format/writer';
import { REPO, fixtureServer } from '../support/servers';

/** Slack over a call's timeout for the error to come back on a loaded 2-core machine. */
const SLACK_MS = 3000;

describe('environment: faulty servers give recorded, coded errors and nothing hangs', function () {
  this.timeout(30_000);
  let env: ToolEnvironment;
  const logs: string[] = [];
  let dir: string;
  let writer: TraceWriter;
  let calls = 0;

  async function record(tool: string, outcome: CallOutcome): Promise<void> {
    // The outcome goes into a real trace exactly as the runner will write it.
    calls++;
    await writer.append({
      type: 'call.actual',
      episodeId: 'e1',
      turnId: 'e1.t1',
      callId: `e1.t1.c${calls}`,
      tool,
      source: 'mcp',
      ...(outcome.response ? { response: outcome.response } : {}),
      ...(outcome.error ? { error: outcome.error } : {}),
      server: outcome.server,
      latencyMs: outcome.latencyMs,
    });
  }

  async function echo(): Promise<number> {
    const r = await env.call('echo', { message: 'still there?' });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    return (r.response!.structured as JsonObject)['pid'] as number;
  }

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rehearsal-faults-'));
    writer = await TraceWriter.open(path.join(dir, 'trace.jsonl'), { durable: false });
    await writer.append({
      type: 'run',
      runId: 'faults',
      mode: 'shadow',
      policy: { kind: 'reference', id: 'reference' },
    });
    await writer.append({
      type: 'episode',
      episodeId: 'e1',
      index: 0,
      taskId: 'faults',
      mode: 'shadow',
    });
    env = await openEnvironment(
      { faulty: fixtureServer('faulty.mjs') },
      { baseDir: REPO, callTimeoutMs: 800 },
      { log: (l) => logs.push(l) },
    );
    await env.startEpisode();
  });

  after(async () => {
    await env.close();
    await writer.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a server that hangs: TOOL_TIMEOUT at the timeout, and the server keeps serving', async () => {
    const pid = await echo();
    const r = await env.call('hang', {}, { timeoutMs: 700 });
    await record('hang', r);
    assert.equal(r.error?.code, 'TOOL_TIMEOUT');
    assert.ok(r.latencyMs >= 650 && r.latencyMs < 700 + SLACK_MS, `latency ${r.latencyMs}`);
    assert.equal(await echo(), pid);
  });

  it('a server that answers slowly: within the timeout the answer is kept; past it TOOL_TIMEOUT, and its late answer is never taken for the next call', async () => {
    const inTime = await env.call('slow', { ms: 300, tag: 'in-time' }, { timeoutMs: 3000 });
    await record('slow', inTime);
    assert.equal(inTime.error, undefined, JSON.stringify(inTime.error));
    assert.deepEqual(inTime.response?.text, ['{"tag":"in-time","sleptMs":300}']);
    assert.ok(inTime.latencyMs >= 300, `latency ${inTime.latencyMs}`);
    const late = await env.call('slow', { ms: 1500, tag: 'late' }, { timeoutMs: 500 });
    await record('slow', late);
    assert.equal(late.error?.code, 'TOOL_TIMEOUT');
    assert.ok(late.latencyMs < 500 + SLACK_MS, `latency ${late.latencyMs}`);
    // The next call is answered with its own result, even while the late one arrives.
    const next = await env.call('slow', { ms: 1200, tag: 'next' }, { timeoutMs: 5000 });
    assert.equal(next.error, undefined, JSON.stringify(next.error));
    assert.deepEqual(next.response?.text, ['{"tag":"next","sleptMs":1200}']);
  });

  it('a cancelled call ends with CALL_CANCELLED', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const r = await env.call('hang', {}, { timeoutMs: 5000, signal: controller.signal });
    await record('hang', r);
    assert.equal(r.error?.code, 'CALL_CANCELLED');
    assert.ok(r.latencyMs < 5000);
  });

  it('garbage on stdout instead of an answer: PROTOCOL_ERROR at the timeout, with the garbage logged', async () => {
    const r = await env.call('garbage', {}, { timeoutMs: 700 });
    await record('garbage', r);
    assert.equal(r.error?.code, 'PROTOCOL_ERROR');
    assert.match(r.error!.message, /not JSON-RPC/);
    assert.ok(r.latencyMs < 700 + SLACK_MS);
    assert.ok(
      logs.some((l) => l.startsWith('[faulty] protocol error')),
      logs.join('\n'),
    );
  });

  it('a log line on stdout before a proper answer does not lose the answer', async () => {
    const r = await env.call('noisy_echo', { message: 'hello' });
    assert.equal(r.error, undefined);
    assert.deepEqual(r.response?.text, ['hello']);
  });

  it('a result of the wrong shape: PROTOCOL_ERROR at once', async () => {
    const r = await env.call('bad_shape', {});
    await record('bad_shape', r);
    assert.equal(r.error?.code, 'PROTOCOL_ERROR');
    assert.ok(r.latencyMs < 800);
  });

  it('a 10 MB result: RESULT_TOO_LARGE, not recorded, and the server keeps serving', async () => {
    const pid = await echo();
    const before = process.memoryUsage().rss;
    const r = await env.call('huge', {}, { timeoutMs: 20_000 });
    await record('huge', r);
    assert.equal(r.error?.code, 'RESULT_TOO_LARGE');
    assert.equal(r.response, undefined);
    assert.match(r.error!.message, new RegExp(String(RESULT_LIMIT_BYTES)));
    assert.ok(process.memoryUsage().rss - before < 400 * 1024 * 1024, 'memory stays bounded');
    assert.equal(await echo(), pid);
  });

  it('structured content 100,000 deep: RESULT_TOO_DEEP, not recorded, and the server keeps serving', async () => {
    // It was SERVER_CRASHED ("could not be reached"): measuring the result overflowed the stack.
    const pid = await echo();
    const r = await env.call('deep', {}, { timeoutMs: 10_000 });
    await record('deep', r);
    assert.equal(r.error?.code, 'RESULT_TOO_DEEP', JSON.stringify(r.error));
    assert.match(r.error!.message, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
    assert.equal(r.response, undefined);
    assert.equal(await echo(), pid, 'the same server answers');
    const fine = await env.call('deep', { depth: MAX_JSON_DEPTH - 2 });
    assert.equal(fine.error, undefined, 'a value within the bound is taken');
  });

  it('a message over the stdio limit: RESULT_TOO_LARGE, and a fresh server next episode', async () => {
    const pid = await echo();
    const r = await env.call('huge_message', {}, { timeoutMs: 20_000 });
    await record('huge_message', r);
    assert.equal(r.error?.code, 'RESULT_TOO_LARGE');
    const next = await env.call('echo', { message: 'x' });
    assert.equal(next.error?.code, 'SERVER_CRASHED');
    await env.startEpisode();
    assert.notEqual(await echo(), pid);
  });

  it('a server that crashes mid-call: SERVER_CRASHED with the tail of its stderr, then restarted for the next episode', async () => {
    const pid = await echo();
    const r = await env.call('crash', {}, { timeoutMs: 10_000 });
    await record('crash', r);
    assert.equal(r.error?.code, 'SERVER_CRASHED');
    assert.match(r.error!.message, /database handle lost/);
    assert.ok(r.latencyMs < 10_000);
    const later = await env.call('echo', { message: 'x' });
    await record('echo', later);
    assert.equal(later.error?.code, 'SERVER_CRASHED');
    assert.match(later.error!.message, /stopped earlier in this episode/);
    assert.deepEqual(
      await env.snapshot(),
      { faulty: null },
      'a server without a snapshot tool has no state to grade',
    );
    await env.startEpisode();
    const revived = await echo();
    assert.notEqual(revived, pid, 'a new process serves the next episode');
  });

  it('every outcome above is a valid call.actual event in the trace, with its code', async () => {
    const { events } = await readTraceEvents(writer.file);
    const actual = events.filter((e) => e.type === 'call.actual') as unknown as JsonObject[];
    assert.equal(actual.length, calls);
    for (const e of actual) assert.ok(validateTraceEvent(e).ok, JSON.stringify(e).slice(0, 200));
    const codes = actual.map((e) => (e['error'] as JsonObject | undefined)?.['code']);
    for (const code of [
      'TOOL_TIMEOUT',
      'CALL_CANCELLED',
      'PROTOCOL_ERROR',
      'RESULT_TOO_LARGE',
      'RESULT_TOO_DEEP',
      'SERVER_CRASHED',
    ])
      assert.ok(codes.includes(code), `${code} missing from ${codes.join(',')}`);
  });

  it('a server that exits before the handshake: startEpisode rejects with SERVER_START_FAILED and its stderr', async () => {
    const broken = await openEnvironment(
      { broken: fixtureServer('exits-at-start.mjs') },
      { baseDir: REPO },
    );
    try {
      await assert.rejects(
        broken.startEpisode(),
        (e: StudioError) =>
          e.code === 'SERVER_START_FAILED' && /API_KEY is not set/.test(e.message),
      );
      const r = await broken.call('anything', {});
      assert.equal(r.error?.code, 'NO_EPISODE');
    } finally {
      await broken.close();
    }
  });

  it('a server started through a launcher that does not exec is ended with it: nothing is left running', async () => {
    const server = fixtureServer('faulty.mjs');
    // `sh -c 'node faulty.mjs; ...'` cannot exec (a command follows), so the server is sh's child.
    const launched = await openEnvironment(
      {
        wrapped: {
          type: 'stdio',
          command: 'sh',
          args: ['-c', `"${server.command}" "${server.args![0]}"; echo launcher done`],
          env: { FAULTY_LINGER: '1' },
        },
      },
      { baseDir: REPO },
    );
    let serverPid = 0;
    try {
      await launched.startEpisode();
      const r = await launched.call('echo', { message: 'who are you?' });
      serverPid = (r.response!.structured as JsonObject)['pid'] as number;
      assert.ok(serverPid > 0);
    } finally {
      await launched.close();
    }
    const alive = () => {
      try {
        process.kill(serverPid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 40 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(alive(), false, `the server (pid ${serverPid}) outlived the environment`);
  });

  it('a server whose tools/list pages forever: SERVER_START_FAILED at the page bound, not unbounded growth', async () => {
    const endless = await openEnvironment(
      { endless: fixtureServer('endless-tools.mjs') },
      { baseDir: REPO },
    );
    try {
      await assert.rejects(
        endless.startEpisode(),
        (e: StudioError) =>
          e.code === 'SERVER_START_FAILED' &&
          /tools\/list went on past 100 pages or 1000 tools \(100 so far\)/.test(e.message),
      );
    } finally {
      await endless.close();
    }
  });

  it('a command that does not exist: SERVER_START_FAILED', async () => {
    const missing = await openEnvironment(
      { ghost: { type: 'stdio', command: 'definitely-not-a-command-rehearsal', args: [] } },
      { baseDir: REPO },
    );
    try {
      await assert.rejects(
        missing.startEpisode(),
        (e: StudioError) => e.code === 'SERVER_START_FAILED' && /ENOENT/.test(e.message),
      );
    } finally {
      await missing.close();
    }
  });
});
