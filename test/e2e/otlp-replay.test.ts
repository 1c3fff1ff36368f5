// An agent's OpenTelemetry trace, imported, is rehearsed by a policy as any recorded run is: replay
// with an endpoint policy, then its fidelity report, a call's diff and fidelity marks.
import * as assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChatServer } from '../support/chatServer';
import { startChatServer } from '../support/chatServer';
import { rehearse } from '../support/cli';
import { FIXTURES } from '../support/servers';

describe('an imported OTLP trace replays with a policy', function () {
  this.timeout(120_000);
  let dir = '';
  let endpoint: ChatServer;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'otlp-replay-'));
    // The weather exactly as recorded; a booking that succeeds, where the real one failed.
    let n = 0;
    endpoint = await startChatServer(() =>
      n++ === 0
        ? '\n<execution_result>\n{"city": "Paris", "temp_c": 18, "sky": "cloudy"}\n</execution_result>'
        : '\n<execution_result>\n{"booked": true, "restaurant": "Chez Lu"}\n</execution_result>',
    );
  });
  after(async () => {
    await endpoint?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('gets rehearsals, scores, a diff and fidelity marks', async () => {
    const out = path.join(dir, 'imported');
    const imported = await rehearse(
      'import',
      'otlp',
      path.join(FIXTURES, 'otlp', 'pydantic-ai.json'),
      '--out',
      out,
    );
    assert.equal(imported.code, 0, imported.err);
    const [runId] = await readdir(path.join(out, 'runs'));
    const replay = await rehearse(
      'replay',
      path.join(out, 'runs', runId),
      '--policy',
      endpoint.url,
      '--model',
      'm',
      '--out',
      path.join(dir, 'replays'),
      '--no-progress',
      '--json',
    );
    assert.equal(replay.code, 0, replay.err);
    assert.equal(endpoint.requests.length, 2, 'one rehearsal per recorded call');
    const [replayId] = await readdir(path.join(dir, 'replays'));
    const trace = path.join(dir, 'replays', replayId, 'trace.jsonl');
    const fidelity = (await readFile(trace, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; callId?: string; scores?: object })
      .filter((e) => e.type === 'fidelity')
      .map((e) => [e.callId, (e.scores as { exactMatch: boolean }).exactMatch]);
    assert.deepEqual(fidelity, [
      ['call_W3ath3rPar1s', true],
      ['call_B00kChezLu', false],
    ]);
    const diff = await rehearse('diff', trace, '--call', 'call_B00kChezLu');
    assert.equal(diff.code, 0, diff.err);
    assert.match(diff.out, /booked/);
    // The booking was rehearsed as a success; the trace's execute_tool span says it failed.
    const marked = await rehearse('annotate', trace, '--mismatches', '--json');
    assert.equal(marked.code, 0, marked.err);
    const summary = JSON.parse(marked.out) as { marked: number; byKind: object };
    assert.deepEqual([summary.marked, summary.byKind], [1, { wrong_error_state: 1 }]);
    const marks = (await readFile(path.join(path.dirname(trace), 'annotations.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { callId?: string }).callId);
    assert.deepEqual(marks, ['call_B00kChezLu']);
  });
});
