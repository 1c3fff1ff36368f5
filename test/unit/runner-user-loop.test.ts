// A task's user in the loop (docs/task-format.md, A user in the loop): after each answer of the
// agent past the task's turns the user says its next message, or ends the conversation as τ²'s
// does: a stop text, the agent's transfer tool, a script that ran out; a user that never stops ends
// the episode USER_TURN_LIMIT, and a user that fails ends only its episode, with its code.
import * as assert from 'node:assert/strict';
import { StudioError } from '../../src/core/base/errors';
import type { ToolDefinition } from '../../src/core/protocol/types';
import type { EpisodeContext } from '../../src/core/runner/episode';
import { playEpisode } from '../../src/core/runner/episode';
import { withDefaults } from '../../src/core/runner/settings';
import type { TaskFile, TaskUser } from '../../src/core/tasks/format/taskFile';
import { findTaskFault } from '../../src/core/tasks/format/loader';
import type { OpenUser, UserAsk } from '../../src/core/tasks/taskUser';
import type { NewTraceEvent, TraceEvent } from '../../src/core/trace/format/schema';
import {
  ScriptedEnvironment,
  ScriptedPolicy,
  actResult,
  callText,
  jsonOutcome,
  rehearseResult,
  resultText,
} from '../builders/scriptedPolicy';

const STOP = '###STOP###';
const TOOLS: ToolDefinition[] = ['cancel_order', 'transfer_to_human_agents'].map((name) => ({
  name,
  description: `${name}.`,
  parameters: { type: 'object', properties: {} },
}));

const task = (user: TaskUser): TaskFile => ({
  version: 1,
  id: 'user-loop',
  turns: [{ user: 'Cancel my order, please.' }],
  user,
  servers: { shop: { builtin: 'retail' } },
  checks: [{ kind: 'call', tool: 'cancel_order' }],
});

/**
 * Asks for confirmation first; cancels once the user said "yes"; transfers when the user asks for a
 * person; otherwise answers "Anything else?".
 */
const policy = () =>
  new ScriptedPolicy({
    act: (request) => {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return actResult('Done.');
      const said = last.content;
      if (said === 'yes') return actResult(callText('cancel_order', {}));
      if (said === 'a person') return actResult(callText('transfer_to_human_agents', {}));
      if (said.startsWith('Cancel')) return actResult('Shall I cancel it? (yes/no)');
      return actResult('Anything else?');
    },
    rehearse: () => rehearseResult(resultText({ ok: true })),
  });

const PHONE: ToolDefinition[] = [
  { name: 'toggle_airplane_mode', description: 'On the phone.', parameters: { type: 'object' } },
];

async function play(user: TaskUser, extra: Partial<EpisodeContext> = {}) {
  const events: NewTraceEvent[] = [];
  let airplane = false;
  const env = new ScriptedEnvironment({
    tools: TOOLS,
    respond: () => jsonOutcome({ ok: true }),
    user: {
      tools: PHONE,
      respond: () => ((airplane = !airplane), jsonOutcome({ airplane })),
    },
  });
  const outcome = await playEpisode({
    task: task(user),
    episodeId: 'e1',
    index: 0,
    mode: 'shadow',
    policy: policy(),
    env,
    settings: withDefaults({}),
    emit: (e) => {
      events.push(e);
      return Promise.resolve({ v: 1, ts: '2026-12-07T00:00:00.000Z', ...e } as TraceEvent);
    },
    ...extra,
  });
  const end = events.find((e) => e.type === 'episode.end');
  const users = events.flatMap((e) => (e.type === 'turn' && e.user !== undefined ? [e.user] : []));
  return { outcome, end, users, env, events };
}

describe('runner: a user in the loop', () => {
  it('a script user speaks after each answer; each message is a turn of the trace and transcript', async () => {
    const { outcome, end, users, env } = await play({
      kind: 'script',
      messages: ['yes', 'no, that is all'],
    });
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(users, ['Cancel my order, please.', 'yes', 'no, that is all']);
    assert.deepEqual(
      outcome.transcript.turns.map((t) => [t.user, t.answer]),
      [
        ['Cancel my order, please.', 'Shall I cancel it? (yes/no)'],
        ['yes', 'Done.'],
        ['no, that is all', 'Anything else?'],
      ],
    );
    assert.deepEqual(
      env.calls.map((c) => c.name),
      ['cancel_order'],
    );
    assert.equal(outcome.grade?.success, true);
    assert.equal(end?.type === 'episode.end' && end.userEnd?.by, 'done');
  });

  it('a user message with a stop text ends the conversation; the user is not asked again', async () => {
    const asked: UserAsk[] = [];
    const replies = ['yes', `Thanks! ${STOP}`, 'never said'];
    const openUser: OpenUser = () => ({
      next: (ask) => {
        asked.push(ask);
        return Promise.resolve({ kind: 'message', text: replies[ask.asked] });
      },
    });
    const { outcome, end, users } = await play(
      { kind: 'script', messages: ['unused'], stop: [STOP] },
      { openUser },
    );
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(users, ['Cancel my order, please.', 'yes']);
    assert.equal(asked.length, 2);
    // The user saw the conversation so far, the agent's last answer at its end.
    assert.deepEqual(asked[1].conversation.at(-1), { role: 'assistant', content: 'Done.' });
    assert.ok(end?.type === 'episode.end');
    assert.deepEqual(end.userEnd, { by: 'stop', text: `Thanks! ${STOP}` });
    assert.equal(end.error, undefined);
  });

  it("the agent's answer after an end tool (τ²'s transfer) ends the conversation", async () => {
    const { outcome, end, users } = await play({
      kind: 'script',
      messages: ['a person', 'hello?'],
      endTools: ['transfer_to_human_agents'],
    });
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(users, ['Cancel my order, please.', 'a person']);
    assert.ok(end?.type === 'episode.end');
    assert.deepEqual(end.userEnd, { by: 'tool', text: 'transfer_to_human_agents' });
  });

  it('a user that never stops ends the episode USER_TURN_LIMIT after maxTurns messages', async () => {
    const { outcome, end, users } = await play({
      kind: 'script',
      messages: ['hm', 'hm', 'hm', 'hm'],
      maxTurns: 2,
    });
    assert.equal(outcome.status, 'limit');
    assert.equal(outcome.error?.code, 'USER_TURN_LIMIT');
    assert.equal(users.length, 3);
    assert.ok(end?.type === 'episode.end');
    assert.equal(end.error?.code, 'USER_TURN_LIMIT');
    assert.equal(end.reward, 0, 'an episode that hit a limit is graded as failed');
  });

  it('a user that fails ends its episode with its code, and the run may go on (not fatal)', async () => {
    const openUser: OpenUser = () => ({
      next: () =>
        Promise.reject(new StudioError('USER_UNREACHABLE', 'The user endpoint cannot be reached.')),
    });
    const { outcome } = await play({ kind: 'script', messages: ['yes'] }, { openUser });
    assert.equal(outcome.status, 'failed');
    assert.equal(outcome.error?.code, 'USER_UNREACHABLE');
    assert.equal(outcome.fatal, false);
    assert.equal(outcome.transcript.turns.length, 1);
  });

  it("τ²'s user with no endpoint to play it is not asked: the conversation ends after the task's turns, saying why", async () => {
    const { outcome, end, users } = await play({ kind: 'tau2', domain: 'retail', task: '0' });
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(users, ['Cancel my order, please.']);
    assert.ok(end?.type === 'episode.end');
    assert.equal(end.userEnd?.by, 'done');
    assert.match(end.userEnd.text, /--user-endpoint/);
  });

  it("a user's own tool calls run in the user's environment before its message, are shown to it, and are recorded as the user's", async () => {
    const asked: UserAsk[] = [];
    const toggle = (id: string) => ({
      kind: 'calls' as const,
      calls: [{ id, name: 'toggle_airplane_mode', arguments: {} }],
    });
    // Before "yes" it toggles airplane mode twice; before its stop, once more.
    const replies = [
      toggle('a'),
      toggle('b'),
      { kind: 'message' as const, text: 'yes' },
      toggle('c'),
      { kind: 'message' as const, text: STOP },
    ];
    const openUser: OpenUser = () => ({
      next: (ask) => {
        asked.push(ask);
        return Promise.resolve(replies[asked.length - 1]);
      },
    });
    const { outcome, end, env, events } = await play(
      { kind: 'tau2', domain: 'telecom', task: 'x', stop: [STOP] },
      { openUser },
    );
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(
      env.userCalls.map((c) => c.name),
      ['toggle_airplane_mode', 'toggle_airplane_mode', 'toggle_airplane_mode'],
    );
    assert.deepEqual(
      env.calls.map((c) => c.name),
      ['cancel_order'],
      "the agent's calls only",
    );
    // The user was offered its tools and saw each call and its result when asked again.
    assert.deepEqual(asked[0].tools, ['toggle_airplane_mode']);
    assert.deepEqual(asked[2].conversation.slice(-2), [
      { role: 'user', calls: [{ id: 'b', name: 'toggle_airplane_mode', arguments: {} }] },
      { role: 'tool', id: 'b', name: 'toggle_airplane_mode', content: '{"airplane":false}' },
    ]);
    assert.equal(asked[2].asked, 0, 'calls are not messages');
    // The transcript: on the turn of the message they came before; the last one after the answer.
    const [first, second] = outcome.transcript.turns;
    assert.equal(first.userCalls, undefined);
    assert.deepEqual(
      second.userCalls?.map((c) => [c.at, c.afterAnswer ?? false, c.outcome?.response?.text]),
      [
        [0, false, ['{"airplane":true}']],
        [0, false, ['{"airplane":false}']],
        [second.calls.length, true, ['{"airplane":true}']],
      ],
    );
    // The trace: on the `turn` with that message, and on `episode.end` for the one after the last turn.
    const turnCalls = events.flatMap((e) => (e.type === 'turn' && e.userCalls ? [e] : []));
    assert.equal(turnCalls.length, 1);
    assert.equal(turnCalls[0].type === 'turn' && turnCalls[0].user, 'yes');
    assert.ok(end?.type === 'episode.end');
    assert.deepEqual(
      end.userCalls?.map((c) => [c.name, c.response?.text]),
      [['toggle_airplane_mode', ['{"airplane":true}']]],
    );
    assert.deepEqual(end.userEnd, { by: 'stop', text: STOP });
    // No rehearsal of the user's calls: they are not the policy's.
    assert.ok(
      events.every((e) => e.type !== 'call.rehearsal' || e.tool !== 'toggle_airplane_mode'),
    );
  });

  it('a user that keeps calling its own tools ends the episode USER_TOOL_LIMIT at maxToolCalls', async () => {
    const openUser: OpenUser = () => ({
      next: () =>
        Promise.resolve({
          kind: 'calls',
          calls: [{ id: 'a', name: 'toggle_airplane_mode', arguments: {} }],
        }),
    });
    const { outcome, end, env } = await play(
      { kind: 'tau2', domain: 'telecom', task: 'x', maxToolCalls: 3 },
      { openUser },
    );
    assert.equal(outcome.status, 'limit');
    assert.equal(outcome.error?.code, 'USER_TOOL_LIMIT');
    assert.equal(env.userCalls.length, 3, 'the fourth call was not made');
    assert.ok(end?.type === 'episode.end');
    assert.equal(end.userCalls?.length, 3);
    assert.equal(end.reward, 0);
  });

  it('the task format takes a user of either kind and refuses one it cannot play', () => {
    assert.equal(
      findTaskFault(task({ kind: 'script', messages: ['yes'], stop: [STOP] })),
      undefined,
    );
    assert.equal(
      findTaskFault(task({ kind: 'tau2', domain: 'mock', task: 'create_task_1', maxTurns: 5 })),
      undefined,
    );
    const noMessages = findTaskFault({
      ...task({ kind: 'script', messages: [] }),
      user: { kind: 'script' },
    });
    assert.equal(noMessages?.path, '$.user');
    const tooMany = findTaskFault(task({ kind: 'script', messages: ['a'], maxTurns: 0 }));
    assert.equal(tooMany?.path, '$.user.maxTurns');
  });
});
