// `--audit` runs the real tools beside an imagined episode, for comparison only: it must never
// change how the episode is graded. An imagined episode's invented ids reach the real tools too, and
// the real state they change is not the state the episode imagined.
import * as assert from 'node:assert/strict';
import type { JsonValue } from '../../src/core/base/json';
import type { ToolDefinition } from '../../src/core/protocol/types';
import type { EpisodeOutcome } from '../../src/core/runner/episode';
import { playEpisode } from '../../src/core/runner/episode';
import type { RunSettings } from '../../src/core/runner/settings';
import { withDefaults } from '../../src/core/runner/settings';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';
import type { NewTraceEvent, TraceEvent } from '../../src/core/trace/format/schema';
import {
  ScriptedEnvironment,
  ScriptedPolicy,
  actResult,
  callText,
  rehearseResult,
  resultText,
} from '../builders/scriptedPolicy';

const FREEZE: ToolDefinition = {
  name: 'freeze_card',
  description: 'Freeze a card.',
  parameters: { type: 'object', properties: { card_id: { type: 'string' } } },
};

const TASK: TaskFile = {
  version: 1,
  id: 'bank-train-0001',
  turns: [{ user: 'Please freeze my card.' }],
  servers: { bank: { builtin: 'bank' } },
  checks: [
    { kind: 'call', tool: 'freeze_card' },
    { kind: 'answer', contains: ['frozen'] },
    // The real state after the audited call on an invented id: a write the task did not ask for.
    { kind: 'state', server: 'bank', path: '$.writes', equals: [] },
  ],
};

/** Calls `freeze_card` on an id it invented, rehearses an ok, then answers. */
const scriptedPolicy = () =>
  new ScriptedPolicy({
    act: (request) =>
      actResult(
        request.messages.some((m) => m.role === 'tool')
          ? 'Your card is frozen.'
          : callText('freeze_card', { card_id: 'CARD9' }),
      ),
    rehearse: () => rehearseResult(resultText({ ok: true })),
  });

/** A bank whose every call is a write the snapshot records. */
function recordingBank(): ScriptedEnvironment {
  let writes: JsonValue[] = [];
  return new ScriptedEnvironment({
    tools: [FREEZE],
    onStart: () => (writes = []),
    respond: (name, args) => {
      writes.push({ name, args });
      return {
        response: { text: ['{"error": "no such card"}'], isError: true },
        latencyMs: 1,
        server: 'bank',
      };
    },
    snapshot: () => ({ bank: { writes } }),
  });
}

async function imagined(
  settings: Partial<RunSettings>,
): Promise<{ outcome: EpisodeOutcome; events: NewTraceEvent[]; env: ScriptedEnvironment }> {
  const env = recordingBank();
  const events: NewTraceEvent[] = [];
  const outcome = await playEpisode({
    task: TASK,
    episodeId: 'e1',
    index: 0,
    mode: 'imagine',
    policy: scriptedPolicy(),
    env,
    settings: withDefaults(settings),
    emit: (e) => {
      events.push(e);
      return Promise.resolve({ v: 1, ts: '2026-12-06T00:00:00.000Z', ...e } as TraceEvent);
    },
  });
  return { outcome, events, env };
}

describe('runner: --audit never changes how an imagined episode is graded', () => {
  for (const reward of ['studio', 'envace'] as const) {
    it(`the same episode gets the same checks and reward with and without --audit (${reward} rule)`, async () => {
      const plain = await imagined({ reward });
      const audited = await imagined({ reward, audit: true });
      assert.deepEqual(
        audited.env.calls.map((c) => c.name),
        ['freeze_card'],
        'the audit ran the real tool',
      );
      assert.deepEqual(plain.env.calls, []);
      assert.ok(audited.events.some((e) => e.type === 'call.actual'));
      assert.equal(plain.outcome.status, 'completed');
      assert.equal(audited.outcome.status, 'completed');
      assert.deepEqual(audited.outcome.grade, plain.outcome.grade);
      const end = (r: typeof plain) => r.events.find((e) => e.type === 'episode.end');
      assert.deepEqual(end(audited), end(plain));
      // The state item is not evaluated on an imagined trajectory, audited or not.
      const state = plain.outcome.grade!.checks.find((c) => c.kind === 'state');
      assert.equal(state?.passed ?? null, null);
    });
  }
});
