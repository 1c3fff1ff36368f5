// The credit rules of imagined rollouts (issue 40): a rehearsal that does not parse is sampled
// again before it may end the episode; an episode a rehearsal ended does not blame the act; rows
// train the tokens the policy sampled (its placeholders, no end token it never wrote).
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { ToolDefinition } from '../../src/core/protocol/types';
import type { EpisodeOutcome } from '../../src/core/runner/episode';
import { playEpisode } from '../../src/core/runner/episode';
import type { RunSettings } from '../../src/core/runner/settings';
import { withDefaults } from '../../src/core/runner/settings';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';
import type {
  CallRehearsalEvent,
  NewTraceEvent,
  TraceEvent,
} from '../../src/core/trace/format/schema';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import type { ExportSummary } from '../../src/core/training/exportRows';
import { exportRows } from '../../src/core/training/exportRows';
import {
  ScriptedEnvironment,
  ScriptedPolicy,
  actResult,
  callText,
  jsonOutcome,
  rehearseResult,
} from '../builders/scriptedPolicy';
import { TraceBuilder } from '../builders/traceBuilder';
import { useTempDir } from '../support/tempDir';

const LOOKUP: ToolDefinition = {
  name: 'get_order_details',
  description: 'An order.',
  parameters: { type: 'object', properties: { order_id: { type: 'string' } } },
};

const TASK: TaskFile = {
  version: 1,
  id: 'retail-train-0001',
  turns: [{ user: 'Is order #W0000001 pending?' }],
  servers: { retail: { builtin: 'retail' } },
  checks: [
    { kind: 'call', tool: 'get_order_details' },
    { kind: 'answer', contains: ['pending'] },
  ],
};

const GOOD =
  '\n<execution_result>\n{"order_id": "#W0000001", "customer_id": "C0000005", "status": "pending"}\n</execution_result>';
/** GOOD as a model with identifier slots sampled it: its invented customer was placeholder 5. */
const GOOD_SAMPLED = GOOD.replace('#W0000001', '#W#1').replace('C0000005', 'C#5');
const BAD = '\n<execution_result>\n{"order_id": "#W0000001", "status": pend\n</execution_result>';

/**
 * Looks the order up, then answers; its rehearsals are `rehearsals` in order (the last one repeats).
 * As a model with identifier slots, it "sampled" placeholders: `sampledText` holds them.
 */
function scriptedPolicy(rehearsals: string[]): ScriptedPolicy {
  const slotted = (text: string) => text.replace('#W0000001', '#W#1').replace('C0000005', 'C#5');
  return new ScriptedPolicy({
    kind: 'onnx',
    act: (request) => {
      const called = request.messages.some((m) => m.role === 'tool');
      const text = called
        ? 'Order #W0000001 is pending.'
        : callText('get_order_details', { order_id: '#W0000001' });
      return actResult(text, { sampledText: slotted(text) });
    },
    rehearse: (_request, n) => {
      const text = rehearsals[Math.min(n, rehearsals.length) - 1];
      return rehearseResult(text, { sampledText: slotted(text) });
    },
  });
}

/** The retail server, for shadow episodes: one order, pending. */
const oneOrder = () =>
  new ScriptedEnvironment({
    tools: [LOOKUP],
    respond: () => jsonOutcome({ order_id: '#W0000001', status: 'pending' }, 'retail'),
  });

interface Played {
  outcome: EpisodeOutcome;
  events: NewTraceEvent[];
  policy: ScriptedPolicy;
  settings: RunSettings;
}

const WARM = { act: { temperature: 1, seed: 3 }, rehearse: { temperature: 0.7, seed: 5 } };

async function play(
  rehearsals: string[],
  settings: Partial<RunSettings> = {},
  mode: 'shadow' | 'imagine' = 'imagine',
): Promise<Played> {
  const policy = scriptedPolicy(rehearsals);
  const events: NewTraceEvent[] = [];
  const full = withDefaults({ mode, sampling: WARM, ...settings });
  const outcome = await playEpisode({
    task: TASK,
    episodeId: 'e1',
    index: 0,
    mode,
    policy,
    env: oneOrder(),
    tools: [LOOKUP],
    settings: full,
    emit: (e) => {
      events.push(e);
      return Promise.resolve({ v: 1, ts: '2026-12-06T00:00:00.000Z', ...e } as TraceEvent);
    },
  });
  return { outcome, events, policy, settings: full };
}

const rehearsalOf = (p: Played) =>
  p.events.find((e) => e.type === 'call.rehearsal') as CallRehearsalEvent;

/** The rollout rows of a played episode, exported from its trace as `rehearse rollout` does. */
async function rolloutRows(
  dir: string,
  p: Played,
  identifierSlots = false,
): Promise<{ rows: DatasetRow[]; summary: ExportSummary }> {
  const t = new TraceBuilder('20261206-220000-imagine-retries', p.settings.mode);
  Object.assign(t.events[0], { settings: p.settings });
  for (const e of p.events) t.push(e);
  const file = path.join(dir, 'runs', 'r1', 'trace.jsonl');
  await t.end().write(file);
  const rows: DatasetRow[] = [];
  const summary = await exportRows(
    [file],
    { actSource: 'rollout', policyRehearsals: true, actRows: 'episode', identifierSlots },
    (r) => rows.push(r),
  );
  return { rows, summary };
}

describe('imagined rollouts: unparsable rehearsals are sampled again, and never blame the act', () => {
  const tmp = useTempDir();

  it('a rehearsal that does not parse is sampled again with a seed of its own; the episode reads the one that parsed', async () => {
    const p = await play([BAD, GOOD]);
    assert.equal(p.outcome.status, 'completed');
    assert.equal(p.policy.rehearsals.length, 2);
    const [first, second] = p.policy.rehearsals.map((r) => r.sampling?.seed);
    assert.equal(first, 5);
    assert.notEqual(second, first, 'a retry with the same seed would write the same text');
    const event = rehearsalOf(p);
    assert.equal(event.result.ok, true);
    assert.equal(event.text, GOOD);
    assert.equal(event.rejected?.length, 1);
    assert.equal(event.rejected[0].text, BAD);
    assert.equal(event.rejected[0].result.code, 'SIMULATOR_JSON_DECODE_ERROR');
    // The tool message the act read is the rehearsal that parsed.
    const tool = p.outcome.transcript.turns[0].calls[0];
    assert.equal(tool.outcome?.response?.isError, undefined);
    assert.match(tool.outcome!.response!.text![0], /pending/);

    const { rows, summary } = await rolloutRows(tmp(), p);
    const reward = p.outcome.grade!.reward!;
    assert.ok(reward > 0);
    const rejected = rows.filter((r) => r.id.endsWith('/rehearse-rejected-1'));
    assert.equal(rejected.length, 1);
    assert.equal(rejected[0].target, BAD);
    assert.equal(rejected[0].reward, 0, 'a rejected sample earns what an episode it ended earns');
    assert.equal(rejected[0].finished, false);
    assert.equal(rejected[0].temperature, 0.7);
    const kept = rows.filter((r) => r.role === 'rehearse' && !r.id.includes('rejected'));
    assert.deepEqual(
      kept.map((r) => [r.target, r.reward]),
      [[GOOD, reward]],
    );
    assert.equal(rows.filter((r) => r.role === 'act').length, 1);
    assert.equal(summary.maskedActRows, 0);
  });

  it('when every sample fails the episode ends, its act row leaves the update and its rehearse rows keep their penalty', async () => {
    const p = await play([BAD], { rehearsalRetries: 2 });
    assert.equal(p.outcome.status, 'failed');
    assert.equal(p.outcome.error?.code, 'SIMULATOR_JSON_DECODE_ERROR');
    assert.equal(p.policy.rehearsals.length, 3, 'one sample and two retries');
    assert.equal(rehearsalOf(p).rejected?.length, 2);

    const { rows, summary } = await rolloutRows(tmp(), p);
    assert.equal(rows.filter((r) => r.role === 'act').length, 0);
    assert.equal(summary.maskedActRows, 1);
    const rehearse = rows.filter((r) => r.role === 'rehearse');
    assert.equal(rehearse.length, 3);
    assert.ok(rehearse.every((r) => r.reward === 0 && r.finished === false));
  });

  it('an act that ends the episode itself (a parse error of its own) is still blamed', async () => {
    const p = await play([GOOD]);
    // The same trace, but the episode ended on the act's parse error: its act row stays.
    const end = p.events.find((e) => e.type === 'episode.end')!;
    Object.assign(end, {
      status: 'failed',
      reward: 0,
      error: { code: 'NO_TOOL_CALL_FOUND', message: 'a fragment' },
    });
    const { rows, summary } = await rolloutRows(tmp(), p);
    assert.equal(summary.maskedActRows, 0);
    assert.deepEqual(
      rows.filter((r) => r.role === 'act').map((r) => r.reward),
      [0],
    );
  });

  it('greedy rehearsals, shadow episodes and EnvACE’s rule take one sample', async () => {
    const greedy = await play([BAD, GOOD], {
      sampling: { ...WARM, rehearse: { temperature: 0, seed: 5 } },
    });
    assert.equal(greedy.policy.rehearsals.length, 1);
    assert.equal(greedy.outcome.status, 'failed');

    const shadow = await play([BAD, GOOD], {}, 'shadow');
    assert.equal(shadow.policy.rehearsals.length, 1, 'a shadow rehearsal is measured as it came');
    assert.equal(rehearsalOf(shadow).result.ok, false);
    assert.equal(shadow.outcome.status, 'completed');

    assert.equal(withDefaults({ reward: 'envace' }).rehearsalRetries, 0);
    assert.equal(withDefaults({}).rehearsalRetries, 3);
    const envace = await play([BAD, GOOD], { reward: 'envace' });
    assert.equal(envace.policy.rehearsals.length, 1);
  });
});

describe('rollout rows train the tokens the policy sampled', () => {
  const tmp = useTempDir();

  it('with identifier slots, a row’s target is the text as sampled, placeholders and all', async () => {
    const p = await play([GOOD]);
    assert.equal(rehearsalOf(p).sampled, GOOD_SAMPLED);
    const { rows } = await rolloutRows(tmp(), p, true);
    const rehearse = rows.find((r) => r.role === 'rehearse')!;
    const act = rows.find((r) => r.role === 'act')!;
    // Hiding the revealed text again would have numbered the invented customer C#1.
    assert.equal(rehearse.target, GOOD_SAMPLED);
    assert.equal(act.target, 'Order #W#1 is pending.');
    // Without identifier slots the target is the recorded text.
    const plain = await rolloutRows(tmp(), p, false);
    assert.equal(plain.rows.find((r) => r.role === 'rehearse')!.target, GOOD);
  });

  it('a sample that stopped on a stop string is trained without an end token; one that ended on it, with', async () => {
    const p = await play([GOOD]);
    const { rows } = await rolloutRows(tmp(), p);
    assert.equal(rows.find((r) => r.role === 'rehearse')!.eos, false);
    assert.equal('eos' in rows.find((r) => r.role === 'act')!, false);
  });
});
