// `--audit` runs the real tools beside an imagined episode, for comparison only: it must never
// change how the episode is graded. An imagined episode's invented ids reach the real tools too, and
// the real state they change is not the state the episode imagined.
import * as assert from 'node:assert/strict';
import type { JsonValue } from '../../src/core/base/json';
import type { CallOutcome, Environment, EnvironmentSnapshot } from '../../src/core/env/types';
import type { ActRequest, ActResult, Policy, RehearseResult } from '../../src/core/policy/types';
import { parseActOutput } from '../../src/core/protocol/actParser';
import { parseRehearsalOutput } from '../../src/core/protocol/rehearsalParser';
import type { ToolDefinition } from '../../src/core/protocol/types';
import type { EpisodeOutcome } from '../../src/core/runner/episode';
import { playEpisode } from '../../src/core/runner/episode';
import type { RunSettings } from '../../src/core/runner/settings';
import { withDefaults } from '../../src/core/runner/settings';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';
import type { NewTraceEvent, TraceEvent } from '../../src/core/trace/format/schema';

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
class ScriptedPolicy implements Policy {
  readonly info = { kind: 'reference' as const, id: 'scripted' };
  act(request: ActRequest): Promise<ActResult> {
    const called = request.messages.some((m) => m.role === 'tool');
    const text = called
      ? 'Your card is frozen.'
      : '\n<tool_call>\n{"name": "freeze_card", "arguments": {"card_id": "CARD9"}}\n</tool_call>';
    return Promise.resolve({
      text,
      parse: parseActOutput(text),
      finish: 'eos',
      tokens: { prompt: 10, completion: 5 },
      latencyMs: 1,
    });
  }
  rehearse(): Promise<RehearseResult> {
    const text = '\n<execution_result>\n{"ok": true}\n</execution_result>';
    return Promise.resolve({
      samples: [{ text, parse: parseRehearsalOutput(text), finish: 'stop' }],
      tokens: { prompt: 10, completion: 5 },
      latencyMs: 1,
    });
  }
  endSession(): void {}
  dispose(): void {}
}

/** A bank whose every call is a write the snapshot records. */
class RecordingBank implements Environment {
  readonly source = 'mcp' as const;
  readonly calls: string[] = [];
  private writes: JsonValue[] = [];
  startEpisode(): Promise<void> {
    this.writes = [];
    return Promise.resolve();
  }
  tools(): ToolDefinition[] {
    return [FREEZE];
  }
  call(name: string, args: JsonValue): Promise<CallOutcome> {
    this.calls.push(name);
    this.writes.push({ name, args });
    return Promise.resolve({
      response: { text: ['{"error": "no such card"}'], isError: true },
      latencyMs: 1,
      server: 'bank',
    });
  }
  snapshot(): Promise<EnvironmentSnapshot> {
    return Promise.resolve({ bank: { writes: this.writes } });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  dispose(): void {}
}

async function imagined(
  settings: Partial<RunSettings>,
): Promise<{ outcome: EpisodeOutcome; events: NewTraceEvent[]; env: RecordingBank }> {
  const env = new RecordingBank();
  const events: NewTraceEvent[] = [];
  const outcome = await playEpisode({
    task: TASK,
    episodeId: 'e1',
    index: 0,
    mode: 'imagine',
    policy: new ScriptedPolicy(),
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
      assert.deepEqual(audited.env.calls, ['freeze_card'], 'the audit ran the real tool');
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
