// `rehearse export --format otlp`: a studio run as GenAI spans (actual and rehearsed results on each
// execute_tool span, fidelity as gen_ai.evaluation.result events), and `rehearse import otlp` of
// that file gives back the same episodes.
import * as assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { JsonObject, JsonValue } from '../../src/core/base/json';
import { actualEventToolText } from '../../src/core/runner/toolMessages';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import type { TraceEvent } from '../../src/core/trace/format/schema';
import { serializeTraceEvent } from '../../src/core/trace/format/writer';
import { sampleShadowRun } from '../builders/samples';
import { cliWrites } from '../support/cli';

const cli = cliWrites;

/**
 * What an episode is, as a recorded conversation: its instruction, tools, and each turn's user
 * message, calls (id, name, arguments, actual text, failed or not) or final answer or parse error.
 */
function episodes(events: readonly TraceEvent[]) {
  const out: JsonObject[] = [];
  const actuals = new Map(
    events.flatMap((e) => (e.type === 'call.actual' ? [[e.callId, e] as const] : [])),
  );
  for (const e of events) {
    if (e.type === 'episode')
      out.push({
        instruction: e.instruction ?? null,
        system: e.system ?? null,
        tools: (e.tools ?? []).map((t) => t.name),
        turns: [],
      });
    if (e.type !== 'turn') continue;
    const p = e.parse;
    (out.at(-1)!['turns'] as JsonValue[]).push({
      user: e.user ?? null,
      ...(p.kind === 'calls'
        ? {
            calls: p.calls.map((c) => {
              const a = actuals.get(c.callId);
              return {
                callId: c.callId,
                name: c.name,
                arguments: c.arguments,
                actual: actualEventToolText(a),
                failed: a?.error !== undefined || a?.response?.isError === true,
              };
            }),
          }
        : p.kind === 'final'
          ? { answer: p.answer }
          : { parseError: p.code }),
    });
  }
  return out;
}

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'otlp-export-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function writeSampleRun(): Promise<{ file: string; events: TraceEvent[] }> {
  const run = sampleShadowRun();
  const dir = path.join(tmp, 'runs', run.runId);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'trace.jsonl');
  await writeFile(file, run.events.map((e) => serializeTraceEvent(e) + '\n').join(''));
  return { file, events: run.events };
}

describe('export --format otlp', () => {
  it('export then import gives back the same episodes', async () => {
    const { file, events } = await writeSampleRun();
    const otlp = path.join(tmp, 'run.otlp.json');
    const exported = await cli(['export', file, '--format', 'otlp', '--out', otlp]);
    assert.equal(exported.code, 0, exported.err.join('\n'));
    assert.deepEqual(exported.out, [`wrote 3 episodes of 1 run as OTLP JSON to ${otlp}`]);
    const out = path.join(tmp, 'imported');
    const imported = await cli(['import', 'otlp', otlp, '--out', out]);
    assert.equal(imported.code, 0, imported.err.join('\n'));
    const [runId] = await readdir(path.join(out, 'runs'));
    const back = await readTraceEvents(path.join(out, 'runs', runId, 'trace.jsonl'));
    assert.equal(back.skippedCount, 0);
    const original = episodes(events);
    assert.equal(original.length, 3);
    assert.deepEqual(episodes(back.events), original);
    // Every call was exported with an execute_tool span, so every error flag came back.
    assert.deepEqual(
      imported.err.filter((l) => l.includes('error flag')),
      [],
    );
  });

  it('an execute_tool span carries the actual and the rehearsed result, and fidelity as evaluation events', async () => {
    const { file } = await writeSampleRun();
    const otlp = path.join(tmp, 'run.otlp.json');
    assert.equal((await cli(['export', file, '--format', 'otlp', '--out', otlp])).code, 0);
    const lines = (await readFile(otlp, 'utf8')).trim().split('\n');
    assert.equal(lines.length, 3, 'one ExportTraceServiceRequest per episode');
    const spans = (JSON.parse(lines[0]) as JsonObject)['resourceSpans'] as JsonObject[];
    const all = ((spans[0]['scopeSpans'] as JsonObject[])[0]['spans'] as JsonObject[]).map(
      (s): JsonObject & { attrs: Record<string, JsonObject> } =>
        Object.assign({}, s, {
          attrs: Object.fromEntries(
            (s['attributes'] as JsonObject[]).map((a) => [a['key'], a['value']]),
          ) as Record<string, JsonObject>,
        }),
    );
    assert.deepEqual(
      all.map((s) => s['name']),
      [
        'invoke_agent models/default',
        'chat models/default',
        'execute_tool find_user_id_by_email',
        'chat models/default',
        'execute_tool get_order_details',
        'chat models/default',
        'execute_tool cancel_pending_order',
        'chat models/default',
      ],
    );
    const root = all[0];
    assert.ok(all.slice(1).every((s) => s['parentSpanId'] === root['spanId']));
    assert.ok(all.every((s) => /^[0-9a-f]{32}$/.test(s['traceId'] as string)));
    const cancel = all[6];
    assert.deepEqual(cancel.attrs['gen_ai.tool.call.id'], { stringValue: 'e1.t3.c1' });
    assert.deepEqual(cancel.attrs['gen_ai.tool.call.arguments'], {
      stringValue: '{"order_id":"#W2611340","reason":"ordered by mistake"}',
    });
    assert.deepEqual(cancel.attrs['gen_ai.tool.call.result'], {
      stringValue: '{"error":"Non-pending order cannot be cancelled"}',
    });
    assert.deepEqual(cancel.attrs['studio.rehearsal.result'], {
      stringValue:
        '{"order_id":"#W2611340","refund":{"amount":70.35,"method":"original payment"},"status":"cancelled"}',
    });
    assert.equal((cancel['status'] as JsonObject)['code'], 2);
    const evaluations = (cancel['events'] as JsonObject[]).map((e) => {
      assert.equal(e['name'], 'gen_ai.evaluation.result');
      const a = Object.fromEntries(
        (e['attributes'] as JsonObject[]).map((x) => [x['key'], x['value']]),
      ) as Record<string, JsonObject>;
      return [a['gen_ai.evaluation.name'].stringValue, a['gen_ai.evaluation.score.label']];
    });
    assert.deepEqual(evaluations, [
      ['studio.fidelity.exactMatch', { stringValue: 'mismatch' }],
      ['studio.fidelity.fieldF1', undefined],
      ['studio.fidelity.keyJaccard', undefined],
      ['studio.fidelity.typeAgreement', undefined],
      ['studio.fidelity.errorAgreement', { stringValue: 'mismatch' }],
    ]);
    const chat = all[5];
    const input = JSON.parse(
      chat.attrs['gen_ai.input.messages'].stringValue as string,
    ) as JsonObject[];
    assert.deepEqual(
      input.map((m) => m['role']),
      ['user', 'assistant', 'tool', 'assistant', 'tool'],
    );
  });
});
