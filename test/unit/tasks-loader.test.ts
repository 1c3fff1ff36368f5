import * as assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { StudioError } from '../../src/core/base/errors';
import { MAX_JSON_DEPTH } from '../../src/core/base/json';
import { findTaskFault, loadTaskFile, loadTasks } from '../../src/core/tasks/format/loader';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';

function validTask(): TaskFile {
  return {
    version: 1,
    id: 'retail-demo-1',
    turns: [
      { user: 'Cancel order #W1, I ordered it by mistake. My email is a@b.c.' },
      { user: 'Thanks!' },
    ],
    servers: { retail: { builtin: 'retail' } },
    tools: ['find_user_id_by_email', 'cancel_pending_order'],
    checks: [
      {
        id: 'cancelled',
        kind: 'state',
        server: 'retail',
        path: '$.orders["#W1"].status',
        equals: 'cancelled',
        weight: 2,
      },
      {
        id: 'called',
        kind: 'call',
        tool: 'cancel_pending_order',
        args: { order_id: { equals: '#W1' }, reason: { matches: '^ordered' } },
      },
      { kind: 'answer', contains: ['cancel'], turn: 0 },
    ],
    limits: { maxTurns: 10, callTimeoutMs: 5000 },
    reference: {
      turns: [
        {
          calls: [
            {
              name: 'cancel_pending_order',
              arguments: { order_id: '#W1', reason: 'ordered by mistake' },
            },
          ],
          answer: 'Cancelled.',
        },
        { calls: [], answer: 'You are welcome.' },
      ],
    },
  };
}

type Mutation = [string, (t: TaskFile & Record<string, unknown>) => void, string, RegExp];

const MUTATIONS: Mutation[] = [
  [
    'a missing id',
    (t) => {
      delete (t as Partial<TaskFile>).id;
    },
    '$',
    /needs the property "id"/,
  ],
  [
    'a weight that is not a number',
    (t) => {
      (t.checks[1] as unknown as Record<string, unknown>).weight = 'heavy';
    },
    '$.checks[1].weight',
    /must be a number from 0 to 1,000,000, not "heavy"/,
  ],
  [
    'an unknown top-level property',
    (t) => {
      t['instructions'] = 'x';
    },
    '$',
    /unknown property "instructions"/,
  ],
  [
    'no user turn',
    (t) => {
      t.turns = [];
    },
    '$.turns',
    /fewer than 1/,
  ],
  [
    'a bad id',
    (t) => {
      t.id = 'has spaces';
    },
    '$.id',
    /must match pattern/,
  ],
  [
    'an unknown check kind',
    (t) => {
      (t.checks[2] as unknown as Record<string, unknown>).kind = 'vibes';
    },
    '$.checks[2].kind',
    /is "vibes"; it must be one of "state", "call", "no_call", "answer", "judge"/,
  ],
  [
    'a server definition of no known shape',
    (t) => {
      t.servers = { x: { command: 5 } as never };
    },
    '$.servers.x',
    /must/,
  ],
  [
    'a state check on a server the task does not have',
    (t) => {
      (t.checks[0] as { server: string }).server = 'bank';
    },
    '$.checks[0].server',
    /not one of the task's servers/,
  ],
  [
    'a state check with two matchers',
    (t) => {
      (t.checks[0] as { exists?: boolean }).exists = true;
    },
    '$.checks[0]',
    /exactly one matcher/,
  ],
  [
    'a state path that is not a JSONPath',
    (t) => {
      (t.checks[0] as { path: string }).path = '$.orders[#W1';
    },
    '$.checks[0].path',
    /not a JSONPath/,
  ],
  [
    'a reference with fewer turns than the task',
    (t) => {
      t.reference!.turns.pop();
    },
    '$.reference.turns',
    /1 turn\(s\) but the task has 2/,
  ],
  [
    'a repeated check id',
    (t) => {
      t.checks[2].id = 'cancelled';
    },
    '$.checks[2].id',
    /repeats the check id "cancelled"/,
  ],
  [
    'a check turn out of range',
    (t) => {
      (t.checks[2] as { turn?: number }).turn = 5;
    },
    '$.checks[2].turn',
    /task has 2 user turn/,
  ],
  [
    'a required call outside the allow-list',
    (t) => {
      (t.checks[1] as { tool: string }).tool = 'refund_everything';
    },
    '$.checks[1].tool',
    /allow-list/,
  ],
  [
    'a reference call outside the allow-list',
    (t) => {
      t.reference!.turns[0].calls[0].name = 'drop_tables';
    },
    '$.reference.turns[0].calls[0].name',
    /allow-list/,
  ],
  [
    'an invalid regular expression',
    (t) => {
      (t.checks[1] as { args: Record<string, { matches?: string }> }).args['reason'] = {
        matches: '([',
      };
    },
    '$.checks[1].args.reason.matches',
    /regular expression/,
  ],
  [
    'a matcher with two operators',
    (t) => {
      (t.checks[1] as { args: Record<string, unknown> }).args['reason'] = {
        equals: 'a',
        contains: 'b',
      };
    },
    '$.checks[1].args.reason',
    /must NOT have more than 1 properties/,
  ],
  [
    'a negative limit',
    (t) => {
      t.limits = { maxTurns: 0 };
    },
    '$.limits.maxTurns',
    /must be a whole number from 1 to 10,000, not 0/,
  ],
];

describe('tasks: loading rejects malformed task files with the JSONPath of the fault', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rehearsal-tasks-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts the valid task', () => {
    assert.equal(findTaskFault(validTask()), undefined);
  });

  for (const [what, mutate, where, message] of MUTATIONS) {
    it(`rejects ${what} at ${where}`, async () => {
      const task = validTask() as TaskFile & Record<string, unknown>;
      mutate(task);
      const fault = findTaskFault(task);
      assert.ok(fault, 'expected a fault');
      assert.equal(fault!.path, where, fault!.message);
      assert.match(fault!.message, message);
      const file = path.join(dir, `bad-${MUTATIONS.findIndex((m) => m[0] === what)}.task.json`);
      await writeFile(file, JSON.stringify(task, null, 2));
      await assert.rejects(
        loadTaskFile(file),
        (e: StudioError) =>
          e.code === 'TASK_INVALID' &&
          e.message.includes(`${file}: ${where} `) &&
          (e.details as { path: string }).path === where,
      );
    });
  }

  it('refuses a task whose tool values nest past the depth bound, and takes one within it', async () => {
    const nested = (n: number): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = [v];
      return v;
    };
    const deep = validTask();
    deep.reference!.turns[0].calls[0].arguments = {
      order_id: '#W1',
      reason: 'x',
      extra: nested(5000),
    } as never;
    assert.deepEqual(findTaskFault(deep), {
      path: '$',
      message: `nests deeper than ${MAX_JSON_DEPTH} levels in its tool values`,
    });
    const within = validTask();
    within.reference!.turns[0].calls[0].arguments = {
      order_id: '#W1',
      reason: 'x',
      extra: nested(MAX_JSON_DEPTH - 1),
    } as never;
    assert.equal(findTaskFault(within), undefined);
  });

  it('names the line and column of a file that is not JSON', async () => {
    const file = path.join(dir, 'broken.json');
    await writeFile(file, '{\n  "version": 1,\n  "id": "x",,\n}');
    await assert.rejects(
      loadTaskFile(file),
      (e: StudioError) => e.code === 'TASK_INVALID' && /line 3, column \d+/.test(e.message),
    );
  });

  it('loads a folder of *.task.json files, and refuses the whole set when one is malformed or ids repeat', async () => {
    const good = path.join(dir, 'set');
    await rm(good, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) =>
      fs.mkdir(path.join(good, 'nested'), { recursive: true }),
    );
    await writeFile(path.join(good, 'a.task.json'), JSON.stringify(validTask()));
    await writeFile(
      path.join(good, 'nested', 'b.task.json'),
      JSON.stringify({ ...validTask(), id: 'retail-demo-2' }),
    );
    await writeFile(path.join(good, 'notes.json'), '{"not": "a task"}');
    const loaded = await loadTasks([good]);
    assert.deepEqual(
      loaded.map((l) => l.task.id),
      ['retail-demo-1', 'retail-demo-2'],
    );
    assert.equal(loaded[0].baseDir, good);

    await writeFile(
      path.join(good, 'nested', 'c.task.json'),
      JSON.stringify({ ...validTask(), id: 'retail-demo-1' }),
    );
    await assert.rejects(
      loadTasks([good]),
      (e: StudioError) =>
        e.code === 'TASK_INVALID' && /\$\.id "retail-demo-1" is also the id of/.test(e.message),
    );
    await writeFile(
      path.join(good, 'nested', 'c.task.json'),
      JSON.stringify({ ...validTask(), id: 'retail-demo-3', turns: 'hello' }),
    );
    await assert.rejects(
      loadTasks([good]),
      (e: StudioError) => e.code === 'TASK_INVALID' && /\$\.turns must be array/.test(e.message),
    );
  });
});
