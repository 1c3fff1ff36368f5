import * as assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EpisodeTranscript } from '../../src/core/tasks/checks/transcript';
import { gradeEpisode, scoreVerdicts } from '../../src/core/tasks/checks/grade';
import { EndpointJudge } from '../../src/core/tasks/checks/judge';
import { numbersIn } from '../../src/core/tasks/checks/answerText';
import type { CheckSpec, TaskFile } from '../../src/core/tasks/format/taskFile';
import { findTaskFault } from '../../src/core/tasks/format/loader';

function task(checks: CheckSpec[]): TaskFile {
  return {
    version: 1,
    id: 't',
    turns: [{ user: 'one' }, { user: 'two' }],
    servers: { shop: { builtin: 'retail' }, mem: 'memory' },
    checks,
  };
}

const TRANSCRIPT: EpisodeTranscript = {
  turns: [
    {
      user: 'one',
      calls: [
        {
          name: 'get_order',
          arguments: { order_id: '#W1' },
          outcome: { response: { structured: { status: 'delivered' } } },
        },
        {
          name: 'cancel',
          arguments: { order_id: '#W1', reason: 'Ordered by mistake' },
          outcome: { response: { text: ['{"error": "not pending"}'], isError: true } },
        },
        {
          name: 'cancel',
          arguments: { order_id: '#W2' },
          outcome: { error: { code: 'TOOL_TIMEOUT', message: 'slow' } },
        },
      ],
      answer: 'Order #W1 was Delivered on\nMonday; you paid $1,234.50 in total.',
    },
    {
      user: 'two',
      calls: [
        {
          name: 'address',
          arguments: { address: { zip: '02139', city: 'Cambridge' } },
          outcome: { response: { text: ['ok'] } },
        },
      ],
      answer: 'Done.',
    },
  ],
  snapshot: {
    ok: true,
    value: {
      shop: { orders: { '#W1': { status: 'delivered', items: ['a', 'b'] } }, writes: [] },
      mem: null,
    },
  },
};

async function verdict(check: CheckSpec, transcript = TRANSCRIPT) {
  return (await gradeEpisode(task([check]), transcript)).checks[0];
}

describe('tasks: checks', () => {
  it('state checks read the snapshot by JSONPath with each matcher', async () => {
    assert.equal(
      (
        await verdict({
          kind: 'state',
          server: 'shop',
          path: '$.orders["#W1"].status',
          equals: 'delivered',
        })
      ).passed,
      true,
    );
    const wrong = await verdict({
      kind: 'state',
      server: 'shop',
      path: '$.orders["#W1"].status',
      equals: 'cancelled',
    });
    assert.equal(wrong.passed, false);
    assert.match(wrong.detail!, /is "delivered", expected "cancelled"/);
    assert.equal(
      (
        await verdict({
          kind: 'state',
          server: 'shop',
          path: '$.orders["#W1"].items',
          equals: ['a', 'b'],
        })
      ).passed,
      true,
    );
    assert.equal(
      (
        await verdict({
          kind: 'state',
          server: 'shop',
          path: '$.orders["#W1"].status',
          oneOf: ['pending', 'delivered'],
        })
      ).passed,
      true,
    );
    assert.equal(
      (
        await verdict({
          kind: 'state',
          server: 'shop',
          path: '$.orders["#W1"].status',
          matches: '^deliv',
        })
      ).passed,
      true,
    );
    assert.equal(
      (
        await verdict({
          kind: 'state',
          server: 'shop',
          path: '$.orders["#W1"].refund',
          exists: false,
        })
      ).passed,
      true,
    );
    assert.equal(
      (
        await verdict({
          kind: 'state',
          server: 'shop',
          path: '$.orders["#W9"].status',
          exists: true,
        })
      ).passed,
      false,
    );
  });

  it('a state check on a server without snapshot is not evaluated; a failed snapshot fails it', async () => {
    const none = await verdict({ kind: 'state', server: 'mem', path: '$.x', exists: true });
    assert.equal(none.passed, null);
    assert.match(none.detail!, /not evaluated/);
    const failed = await verdict(
      { kind: 'state', server: 'shop', path: '$.x', exists: false },
      { ...TRANSCRIPT, snapshot: { ok: false, error: 'SNAPSHOT_FAILED: server crashed' } },
    );
    assert.equal(failed.passed, false);
    assert.match(failed.detail!, /server crashed/);
  });

  it('required calls count calls that reached the tool, with argument matchers and turn', async () => {
    assert.equal(
      (
        await verdict({
          kind: 'call',
          tool: 'cancel',
          args: { order_id: { equals: '#W1' }, reason: { contains: 'ordered  BY mistake' } },
        })
      ).passed,
      true,
    );
    assert.equal(
      (
        await verdict({
          kind: 'call',
          tool: 'cancel',
          args: { order_id: { equals: '#W1' } },
          ok: true,
        })
      ).passed,
      false,
      'an error response is not a successful call',
    );
    assert.equal(
      (await verdict({ kind: 'call', tool: 'cancel', args: { order_id: { equals: '#W2' } } }))
        .passed,
      false,
      'a call that timed out never reached the tool',
    );
    assert.equal((await verdict({ kind: 'call', tool: 'cancel', min: 2 })).passed, false);
    assert.equal(
      (
        await verdict({
          kind: 'call',
          tool: 'address',
          args: { '$.address.zip': { equals: '02139' } },
          turn: 1,
        })
      ).passed,
      true,
    );
    const wrongTurn = await verdict({ kind: 'call', tool: 'address', turn: 0 });
    assert.equal(wrongTurn.passed, false);
    assert.match(wrongTurn.detail!, /no call of address in turn 0/);
  });

  it('a required call with max fails when more calls match (a write made twice)', async () => {
    const pay = (amount: number) => ({
      name: 'pay',
      arguments: { amount },
      outcome: { response: { structured: { status: 'completed' } } },
    });
    const twice: EpisodeTranscript = {
      turns: [{ user: 'one', calls: [pay(10), pay(10), pay(20)], answer: 'Paid.' }],
      snapshot: { ok: false, error: 'none' },
    };
    const check = (max: number): CheckSpec & { kind: 'call' } => ({
      kind: 'call',
      tool: 'pay',
      args: { amount: { equals: 10 } },
      ok: true,
      max,
    });
    assert.equal((await verdict(check(2), twice)).passed, true);
    const once = await verdict(check(1), twice);
    assert.equal(once.passed, false);
    assert.match(once.detail!, /2 matching call\(s\) of pay, at most 1 allowed/);
    assert.deepEqual(findTaskFault({ ...task([{ ...check(1), min: 2 }]) }), {
      path: '$.checks[0].max',
      message: 'is below min (2)',
    });
  });

  it('forbidden calls fail when a matching call reached the tool', async () => {
    assert.equal(
      (await verdict({ kind: 'no_call', tool: 'cancel', args: { order_id: { equals: '#W1' } } }))
        .passed,
      false,
    );
    assert.equal(
      (await verdict({ kind: 'no_call', tool: 'cancel', args: { order_id: { equals: '#W2' } } }))
        .passed,
      true,
    );
    assert.equal((await verdict({ kind: 'no_call', tool: 'refund' })).passed, true);
  });

  it('answer checks ignore case and whitespace, read numbers with separators, and pick the turn', async () => {
    assert.equal(
      (await verdict({ kind: 'answer', turn: 0, contains: ['delivered on monday'] })).passed,
      true,
    );
    assert.equal(
      (await verdict({ kind: 'answer', turn: 0, contains: ['delivered', 'cancelled'] })).passed,
      false,
    );
    assert.equal(
      (
        await verdict({
          kind: 'answer',
          turn: 0,
          contains: ['delivered', 'cancelled'],
          mode: 'any',
        })
      ).passed,
      true,
    );
    assert.equal((await verdict({ kind: 'answer', turn: 0, numbers: [1234.5] })).passed, true);
    assert.equal((await verdict({ kind: 'answer', turn: 0, numbers: [1234.51] })).passed, false);
    assert.equal(
      (await verdict({ kind: 'answer', turn: 0, notContains: ['refund'] })).passed,
      true,
    );
    assert.equal(
      (await verdict({ kind: 'answer', contains: ['done'] })).passed,
      true,
      'the last turn by default',
    );
    assert.deepEqual(numbersIn('$1,234.50, -3 and 7.25%'), [1234.5, -3, 7.25]);
  });

  it("a missing answer says which user message it answers and where the episode ended, in the trace's turn ids", async () => {
    const cut: EpisodeTranscript = {
      ...TRANSCRIPT,
      turns: [TRANSCRIPT.turns[0], { user: 'two', calls: [] }],
      ended: { lastTurnId: 'e1.t3', code: 'JSON_DECODE_ERROR' },
    };
    assert.equal(
      (await verdict({ kind: 'answer', contains: ['done'] }, cut)).detail,
      'no final answer to user message 2: the episode ended at turn e1.t3 with JSON_DECODE_ERROR',
    );
    const single: EpisodeTranscript = {
      turns: [{ user: 'one', calls: [] }],
      snapshot: TRANSCRIPT.snapshot,
      ended: { lastTurnId: 'e2.t1', code: 'TURN_LIMIT' },
    };
    assert.equal(
      (await verdict({ kind: 'answer', contains: ['done'] }, single)).detail,
      'no final answer: the episode ended at turn e2.t1 with TURN_LIMIT',
    );
    const noEnd: EpisodeTranscript = {
      turns: [{ user: 'one', calls: [] }],
      snapshot: TRANSCRIPT.snapshot,
    };
    assert.equal(
      (await verdict({ kind: 'answer', contains: ['done'] }, noEnd)).detail,
      'no final answer',
    );
  });

  it('scores like EnvACE: weighted share of passed items; not-evaluated items count in neither sum', async () => {
    const g = await gradeEpisode(
      task([
        {
          id: 'a',
          kind: 'state',
          server: 'shop',
          path: '$.orders["#W1"].status',
          equals: 'delivered',
          weight: 3,
        },
        { id: 'b', kind: 'no_call', tool: 'cancel', weight: 1 },
        { id: 'c', kind: 'judge', question: 'Was the agent polite?', weight: 5 },
      ]),
      TRANSCRIPT,
    );
    assert.deepEqual(
      g.checks.map((c) => [c.id, c.kind, c.weight, c.passed]),
      [
        ['a', 'state', 3, true],
        ['b', 'no_call', 1, false],
        ['c', 'judge', 5, null],
      ],
    );
    assert.equal(g.reward, 0.75);
    assert.equal(g.success, false);
    assert.equal(g.notEvaluated, 1);
    assert.match(g.checks[2].detail!, /no judge endpoint/);
    assert.deepEqual(scoreVerdicts([{ id: 'j', kind: 'judge', weight: 1, passed: null }]), {
      reward: null,
      success: null,
      checks: [{ id: 'j', kind: 'judge', weight: 1, passed: null }],
      notEvaluated: 1,
    });
    assert.equal(scoreVerdicts([{ id: 'x', kind: 'call', weight: 2, passed: true }]).success, true);
  });

  describe('judge items through an OpenAI-compatible endpoint', () => {
    let url: string;
    let requests: { model: string; messages: { content: string }[] }[] = [];
    let reply: (prompt: string) => { status: number; content: string };
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        const parsed = JSON.parse(body);
        requests.push(parsed);
        const r = reply(parsed.messages[0].content);
        if (r.status !== 200) {
          res
            .writeHead(r.status, { 'content-type': 'application/json' })
            .end('{"error":{"message":"overloaded"}}');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'c1',
            object: 'chat.completion',
            created: 0,
            model: parsed.model,
            choices: [
              {
                index: 0,
                finish_reason: 'stop',
                message: { role: 'assistant', content: r.content },
              },
            ],
          }),
        );
      });
    });
    before((done) => {
      server.listen(0, '127.0.0.1', () => {
        url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
        done();
      });
    });
    after((done) => {
      server.close(() => done());
    });
    beforeEach(() => {
      requests = [];
    });

    const judgeTask = task([
      {
        id: 'polite',
        kind: 'judge',
        question: 'Did the agent explain why the order cannot be cancelled?',
        pass_condition: 'The answer names the delivered status.',
        failure_examples: ['Cancelled it anyway'],
        turn: 0,
        weight: 2,
      },
    ]);

    it('sends the criterion and the conversation, and keeps the verdict', async () => {
      reply = (prompt) => ({
        status: 200,
        content: JSON.stringify({
          reasoning: 'It says delivered.',
          answer: /Delivered/.test(prompt),
        }),
      });
      const g = await gradeEpisode(judgeTask, TRANSCRIPT, {
        judge: new EndpointJudge({ baseURL: url, model: 'judge-1' }),
      });
      assert.equal(g.checks[0].passed, true);
      assert.match(g.checks[0].detail!, /It says delivered/);
      assert.equal(g.reward, 1);
      assert.equal(requests[0].model, 'judge-1');
      const prompt = requests[0].messages[0].content;
      assert.match(prompt, /Did the agent explain/);
      assert.match(prompt, /Cancelled it anyway/);
      assert.match(prompt, /Assistant calls cancel/);
      assert.doesNotMatch(prompt, /Turn 1/, 'only the judged turn is shown');
    });

    it('an unreadable verdict or a failing endpoint is not evaluated, never a pass', async () => {
      reply = () => ({ status: 200, content: 'Sure, looks fine to me!' });
      let g = await gradeEpisode(judgeTask, TRANSCRIPT, {
        judge: new EndpointJudge({ baseURL: url, model: 'm' }),
      });
      assert.equal(g.checks[0].passed, null);
      assert.equal(g.reward, null);
      reply = () => ({ status: 503, content: '' });
      g = await gradeEpisode(judgeTask, TRANSCRIPT, {
        judge: new EndpointJudge({ baseURL: url, model: 'm' }),
      });
      assert.equal(g.checks[0].passed, null);
      assert.match(g.checks[0].detail!, /judge .* failed/);
    });
  });
});
