/**
 * τ²-bench with a user in the loop (issue 43, second slice): an imported task's user goes on talking
 * after the agent's answers, as a recorded script or as τ²'s own user simulator played by an
 * OpenAI-compatible endpoint (here a stand-in HTTP server whose answers the test chooses), and the
 * episode is graded by τ²'s evaluator. The policy is the same stand-in server, under another model
 * name: it asks for confirmation before it writes, as τ²'s policies require.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { EpisodeEndEvent, TraceEvent, TurnEvent } from '../../src/core/trace/format/schema';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import type { Tau2Report } from '../../src/core/report/tau2Metrics';
import { passHatK } from '../../src/core/report/tau2Metrics';
import { trainerPython } from '../support/trainerPython';
import type { ChatRequest, ChatServer } from '../support/chatServer';
import { startChatServer } from '../support/chatServer';
import { ensureServerBundles } from '../support/servers';
import { rehearse } from '../support/cli';
import { useTempDir } from '../support/tempDir';

const TASK = 'tau2_mock_create_task_1.task.json';
const CONFIRM = "Shall I create the task 'Important Meeting' for user_1?";
const CREATED = "The task 'Important Meeting' was created for user_1.";
/** A telecom task whose expected actions are the agent's refuel, then the user's roaming on its phone. */
const TELECOM_TASK =
  '[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]';

/** The policy: asks first, creates the task once the user says yes, then says so. */
function policyReply(request: ChatRequest): string {
  const first = request.messages[0]?.content ?? '';
  if (first.startsWith('You are a precise tool simulator'))
    return '\n<execution_result>\n{"task_id": "task_2"}\n</execution_result>';
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return CREATED;
  if (last.content?.trim().toLowerCase() === 'yes')
    return `\n<tool_call>\n${JSON.stringify({ name: 'create_task', arguments: { user_id: 'user_1', title: 'Important Meeting' } })}\n</tool_call>`;
  return CONFIRM;
}

/** The stop token the imported task names (read from the installed τ² by the importer). */
async function importedMock(dir: string): Promise<{ file: string; stop: string }> {
  assert.equal((await rehearse('import', 'tau2', '--domain', 'mock', '--out', dir)).code, 0);
  const file = path.join(dir, 'tasks', TASK);
  const task = JSON.parse(await fs.readFile(file, 'utf8')) as { user: { stop: string[] } };
  return { file, stop: task.user.stop[0] };
}

async function traceOf(runs: string): Promise<TraceEvent[]> {
  const [run] = await fs.readdir(runs);
  return (await readTraceEvents(path.join(runs, run, 'trace.jsonl'))).events;
}

/**
 * `rehearse run` of task files with `policy`'s arguments and τ²'s user played by `server` (model
 * `user`), into `runs`; fails the test unless it exits 0.
 */
async function runWithUser(
  server: ChatServer,
  runs: string,
  files: string[],
  policy: string[],
): Promise<void> {
  const r = await rehearse(
    'run',
    ...files,
    ...policy,
    ...['--user-endpoint', server.url, '--user-model', 'user'],
    ...['--out', runs, '--no-progress'],
  );
  assert.equal(r.code, 0, r.out + r.err);
}

const turnsOf = (events: TraceEvent[]) => events.filter((e): e is TurnEvent => e.type === 'turn');
const endsOf = (events: TraceEvent[]) =>
  events.filter((e): e is EpisodeEndEvent => e.type === 'episode.end');

describe("τ²-bench: a user in the loop, graded by τ²'s evaluator", function () {
  this.timeout(300_000);
  const dir = useTempDir('tau2-user-');
  before(() => ensureServerBundles());

  it("the importer names τ²'s user simulator with τ²'s stop tokens; a scripted user confirms and τ² rewards the episode 1", async () => {
    const { file, stop } = await importedMock(path.join(dir(), 'script'));
    const task = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
    assert.deepEqual((task.user as { kind: string; opens: boolean }).kind, 'tau2');
    assert.equal((task.user as { opens: boolean }).opens, true);
    assert.ok((task.user as { stop: string[] }).stop.length === 3);
    task.user = {
      kind: 'script',
      messages: ['yes', `Thanks! ${stop}`, 'never said'],
      stop: [stop],
    };
    await fs.writeFile(file, JSON.stringify(task));
    const server = await startChatServer(policyReply, { models: () => ['policy'] });
    try {
      const runs = path.join(dir(), 'script-runs');
      const r = await rehearse(
        'run',
        file,
        '--policy',
        server.url,
        '--model',
        'policy',
        '--out',
        runs,
        '--no-progress',
      );
      assert.equal(r.code, 0, r.out + r.err);
      const events = await traceOf(runs);
      assert.deepEqual(
        turnsOf(events)
          .flatMap((t) => (t.user !== undefined ? [t.user] : []))
          .slice(1),
        ['yes'],
        'the user said yes, then stopped',
      );
      const [end] = endsOf(events);
      assert.equal(end.status, 'completed');
      assert.deepEqual(end.userEnd, { by: 'stop', text: `Thanks! ${stop}` });
      assert.equal(end.checks?.[0].passed, true, end.checks?.[0].detail);
      assert.match(end.checks![0].detail!, /^τ² reward 1; /);
    } finally {
      await server.close();
    }
  });

  it("--user-endpoint plays τ²'s user simulator: it opens, confirms and stops; τ²'s evaluator gives reward 1", async () => {
    const { file, stop } = await importedMock(path.join(dir(), 'endpoint'));
    const userRequests: ChatRequest[] = [];
    const server = await startChatServer(
      (request) => {
        if (request.model !== 'user') return policyReply(request);
        userRequests.push(request);
        // τ²'s user sees the agent's messages as "user" ones.
        const agent = request.messages.at(-1)?.content ?? '';
        if (agent === CONFIRM) return 'yes';
        if (agent === CREATED) return `Thanks! ${stop}`;
        return "Please create a task called 'Important Meeting' for user_1.";
      },
      { models: () => ['policy', 'user'] },
    );
    try {
      const runs = path.join(dir(), 'endpoint-runs');
      await runWithUser(server, runs, [file], ['--policy', server.url, '--model', 'policy']);
      // τ²'s simulator built the prompt: its guidelines and the task's scenario.
      assert.match(userRequests[0].messages[0].content ?? '', /<scenario>[\s\S]*Important Meeting/);
      assert.equal(userRequests.length, 3, 'the opening, the confirmation, the stop');
      const events = await traceOf(runs);
      assert.deepEqual(
        turnsOf(events).flatMap((t) => (t.user !== undefined ? [t.user] : [])),
        ["Please create a task called 'Important Meeting' for user_1.", 'yes'],
      );
      const [end] = endsOf(events);
      assert.equal(end.status, 'completed');
      assert.equal(end.userEnd?.by, 'stop');
      assert.match(end.checks![0].detail!, /^τ² reward 1; /);
    } finally {
      await server.close();
    }
  });

  it("telecom: the user's own call (roaming on its phone) runs in the user's environment, the trace marks it the user's, and τ² grades it", async () => {
    const out = path.join(dir(), 'telecom');
    assert.equal((await rehearse('import', 'tau2', '--domain', 'telecom', '--out', out)).code, 0);
    let file = '';
    for (const f of await fs.readdir(path.join(out, 'tasks'))) {
      const t = JSON.parse(await fs.readFile(path.join(out, 'tasks', f), 'utf8')) as {
        user: { task: string };
      };
      if (t.user.task === TELECOM_TASK) file = path.join(out, 'tasks', f);
    }
    assert.ok(file, `the import holds ${TELECOM_TASK}`);
    const REFUELED = 'I added 2 GB of data to your line. Please turn roaming on, on your phone.';
    const userRequests: ChatRequest[] = [];
    const server = await startChatServer(
      (request) => {
        const last = request.messages.at(-1)!;
        if (request.model === 'user') {
          userRequests.push(request);
          if (request.messages.length <= 2) return 'My mobile data is not working.';
          if (last.role === 'tool') return 'Roaming is on now.';
          if (last.content === REFUELED)
            return {
              content: null,
              tool_calls: [
                {
                  id: 'tc_roaming',
                  type: 'function',
                  function: { name: 'toggle_roaming', arguments: '{}' },
                },
              ],
            };
          return 'Thanks, it works. ###STOP###';
        }
        const first = request.messages[0]?.content ?? '';
        if (first.startsWith('You are a precise tool simulator'))
          return '\n<execution_result>\n{"ok": true}\n</execution_result>';
        if (last.role === 'tool') return REFUELED;
        if (last.content === 'My mobile data is not working.')
          return `\n<tool_call>\n${JSON.stringify({ name: 'refuel_data', arguments: { customer_id: 'C1001', line_id: 'L1002', gb_amount: 2.0 } })}\n</tool_call>`;
        return 'Great: your mobile data should be fast again.';
      },
      { models: () => ['policy', 'user'] },
    );
    try {
      const runs = path.join(dir(), 'telecom-runs');
      await runWithUser(server, runs, [file], ['--policy', server.url, '--model', 'policy']);
      // τ²'s simulator was given the user's tools (τ²'s get_user_tools), the agent never.
      assert.ok(
        (userRequests[0].tools as { function: { name: string } }[]).some(
          (t) => t.function.name === 'toggle_roaming',
        ),
      );
      const events = await traceOf(runs);
      const episode = events.find((e) => e.type === 'episode');
      const agentTools = (episode?.type === 'episode' ? (episode.tools ?? []) : []).map(
        (t) => t.name,
      );
      assert.ok(agentTools.includes('refuel_data'));
      assert.ok(!agentTools.some((n) => n === 'toggle_roaming' || n.startsWith('rehearsal__')));
      // The user's call is on the turn of the message it made before, marked as the user's.
      const turns = turnsOf(events);
      const after = turns.find((t) => t.user === 'Roaming is on now.');
      assert.ok(after, 'the user spoke after its call');
      assert.equal(after.userCalls?.length, 1);
      const [roaming] = after.userCalls!;
      assert.equal(roaming.name, 'toggle_roaming');
      assert.deepEqual(roaming.arguments, {});
      assert.equal(roaming.error, undefined);
      assert.equal(roaming.response?.isError ?? false, false);
      assert.match(roaming.response!.text!.join('\n'), /[Rr]oaming/);
      assert.ok(turns.filter((t) => t !== after).every((t) => t.userCalls === undefined));
      // Only the agent's calls are rehearsed and recorded as calls: the user's is not the policy's.
      const callTools = events.flatMap((e) =>
        e.type === 'call.actual' || e.type === 'call.rehearsal' ? [e.tool] : [],
      );
      assert.ok(callTools.length > 0);
      assert.ok(
        callTools.every((t) => t === 'refuel_data'),
        callTools.join(', '),
      );
      // The simulator saw its own call and the result when it was asked again.
      const sawResult = userRequests.find((q) => q.messages.at(-1)?.role === 'tool');
      assert.equal(sawResult?.messages.at(-1)?.content, roaming.response!.text!.join('\n'));
      // τ²'s evaluator saw the user's call: both expected actions made, the phone's assertions met.
      const [end] = endsOf(events);
      assert.equal(end.status, 'completed');
      assert.equal(end.userEnd?.by, 'stop');
      assert.match(end.checks![0].detail!, /^τ² reward 1; /, end.checks![0].detail);
      assert.match(end.checks![0].detail!, /expected actions 2 of 2 made/);
      assert.match(end.checks![0].detail!, /environment assertions 3 of 3 met/);
    } finally {
      await server.close();
    }
  });

  it("10 retail tasks with the user played by an endpoint: τ²'s reward per task", async function () {
    // Each task: its server, two messages of the simulator (a Python process each), τ²'s evaluator.
    this.timeout(600_000);
    const out = path.join(dir(), 'retail');
    assert.equal((await rehearse('import', 'tau2', '--domain', 'retail', '--out', out)).code, 0);
    const files = (await fs.readdir(path.join(out, 'tasks'))).sort().slice(0, 10);
    const first = JSON.parse(await fs.readFile(path.join(out, 'tasks', files[0]), 'utf8')) as {
      user: { stop: string[] };
    };
    const stop = first.user.stop[0];
    // The user opens (its only message before the agent's answer is τ²'s greeting), then stops.
    const server = await startChatServer(
      (request) =>
        request.messages.length <= 2 ? 'Hi, I need help with my orders.' : `Thank you. ${stop}`,
      { models: () => ['user'] },
    );
    try {
      const runs = path.join(dir(), 'retail-runs');
      await runWithUser(
        server,
        runs,
        files.map((f) => path.join(out, 'tasks', f)),
        ['--policy', 'reference', '--concurrency', '2'],
      );
      const events = await traceOf(runs);
      const ends = endsOf(events);
      assert.equal(ends.length, 10);
      // The reference plays each task's expected actions in answer to the user's opening; the
      // user's stop ends the conversation, or the transfer where the actions end with it.
      for (const end of ends) {
        assert.ok(end.userEnd?.by === 'stop' || end.userEnd?.by === 'tool', end.userEnd?.by);
        assert.match(end.checks![0].detail!, /^τ² reward 1; /, end.checks![0].detail);
      }
      assert.equal(
        turnsOf(events).filter((t) => t.user === 'Hi, I need help with my orders.').length,
        10,
      );
      // τ²'s figures of the run: pass^1 over the 10 tasks, and who played the user.
      const shown = await rehearse('report', '--format', 'tau2', '--json', runs);
      assert.equal(shown.code, 0, shown.err);
      const report = JSON.parse(shown.out) as Tau2Report;
      const endpoint = new URL(server.url);
      assert.deepEqual(report.domains, [
        {
          domain: 'retail',
          tasks: 10,
          trials: 10,
          averageReward: 1,
          maxK: 1,
          passHatK: [{ k: 1, value: 1 }],
          notEvaluated: 0,
        },
      ]);
      assert.deepEqual(report.users, {
        played: [{ endpoint: endpoint.origin + endpoint.pathname, model: 'user', episodes: 10 }],
        unplayed: 0,
      });
    } finally {
      await server.close();
    }
  });

  it("report --format tau2's pass^k is τ²'s own pass_hat_k", () => {
    const grid: [number, number, number][] = [];
    for (let n = 1; n <= 6; n++)
      for (let c = 0; c <= n; c++) for (let k = 1; k <= n; k++) grid.push([n, c, k]);
    const code =
      'import json, sys\nfrom tau2.metrics.agent_metrics import pass_hat_k\n' +
      'print(json.dumps([pass_hat_k(n, c, k) for n, c, k in json.loads(sys.argv[1])]))';
    const theirs = JSON.parse(
      execFileSync(trainerPython(), ['-c', code, JSON.stringify(grid)], { encoding: 'utf8' }),
    ) as number[];
    grid.forEach(([n, c, k], i) => assert.ok(Math.abs(passHatK(n, c, k) - theirs[i]) < 1e-12));
  });

  it('a user endpoint that is down ends each episode USER_UNREACHABLE, and the run plays the next', async () => {
    const { file } = await importedMock(path.join(dir(), 'down'));
    const policy = await startChatServer(policyReply, { models: () => ['policy'] });
    const gone = await startChatServer(() => 'unused');
    const downUrl = gone.url;
    await gone.close();
    try {
      const runs = path.join(dir(), 'down-runs');
      const r = await rehearse(
        'run',
        file,
        ...['--policy', policy.url, '--model', 'policy', '--episodes', '2'],
        ...['--user-endpoint', downUrl, '--user-model', 'user'],
        ...['--out', runs, '--no-progress'],
      );
      const events = await traceOf(runs);
      const ends = endsOf(events);
      assert.equal(ends.length, 2, r.out + r.err);
      for (const end of ends) {
        assert.equal(end.status, 'failed');
        assert.equal(end.error?.code, 'USER_UNREACHABLE', end.error?.message);
        assert.equal(end.reward, 0);
      }
      const runEnd = events.find((e) => e.type === 'run.end');
      assert.equal(runEnd?.type === 'run.end' && runEnd.status, 'completed');
    } finally {
      await policy.close();
    }
  });
});
