/**
 * τ²-bench's natural-language assertions through the studio's judge (issue 43): with `--judge`,
 * τ²'s own `NLAssertionsEvaluator` asks that endpoint (here a stand-in HTTP server answering in the
 * JSON form τ²'s evaluator parses), each assertion's verdict is in the item's detail, and it counts
 * in τ²'s reward where the task's basis names it. The task is mock's `create_task_1` from a task
 * file of τ²'s format whose basis adds `NL_ASSERTION` (`rehearse import tau2 --tasks`).
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CheckVerdict } from '../../src/core/trace/format/schema';
import { JUDGE_API_KEY_ENV } from '../../src/core/tasks/checks/judgeEndpoint';
import type { ChatServer } from '../support/chatServer';
import { startChatServer } from '../support/chatServer';
import type { CliRun } from '../support/cli';
import { rehearse } from '../support/cli';
import { ensureServerBundles } from '../support/servers';
import { readCheckedTrace } from '../support/traceChecks';
import { trainerPython } from '../support/trainerPython';

const ASSERTION = 'The agent confirmed the task was created successfully';
const KEY = 'judge-key-43';

describe("τ²-bench: natural-language assertions judged by --judge through τ²'s own evaluator", function () {
  this.timeout(300_000);
  let dir = '';
  /** The verdict the stand-in judge gives the assertion. */
  let met = true;
  let judge: ChatServer;
  let taskFile = '';
  const savedKey = process.env[JUDGE_API_KEY_ENV];

  before(async () => {
    ensureServerBundles();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tau2-judge-'));
    judge = await startChatServer(
      () =>
        JSON.stringify({
          results: [
            { expectedOutcome: ASSERTION, reasoning: `judged ${met}`, metExpectation: met },
          ],
        }),
      { key: KEY, models: () => ['judge'] },
    );
    // mock's create_task_1 as τ²'s file has it, its basis counting the NL assertions too.
    const dataDir = execFileSync(
      trainerPython(),
      ['-c', 'from tau2.utils.utils import DATA_DIR; print(DATA_DIR)'],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    )
      .toString()
      .trim();
    const tau2Tasks = JSON.parse(
      await fs.readFile(path.join(dataDir, 'tau2/domains/mock/tasks.json'), 'utf8'),
    ) as {
      id: string;
      evaluation_criteria: { reward_basis?: string[]; nl_assertions: string[] };
    }[];
    const task = tau2Tasks.find((t) => t.id === 'create_task_1')!;
    assert.deepEqual(task.evaluation_criteria.nl_assertions, [ASSERTION]);
    task.evaluation_criteria.reward_basis = ['DB', 'COMMUNICATE', 'NL_ASSERTION'];
    const file = path.join(dir, 'nl-tasks.json');
    await fs.writeFile(file, JSON.stringify([task]));
    const out = path.join(dir, 'imported');
    const imported = await rehearse(
      'import',
      'tau2',
      '--domain',
      'mock',
      '--tasks',
      file,
      '--out',
      out,
    );
    assert.equal(imported.code, 0, imported.err);
    taskFile = path.join(out, 'tasks', 'tau2_mock_create_task_1.task.json');
  });
  beforeEach(() => {
    process.env[JUDGE_API_KEY_ENV] = KEY;
    judge.requests.length = 0;
  });
  after(async () => {
    if (savedKey === undefined) delete process.env[JUDGE_API_KEY_ENV];
    else process.env[JUDGE_API_KEY_ENV] = savedKey;
    await judge.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  /** `rehearse run` of the task's reference solution, with `extra` options. */
  const run = (...extra: string[]) =>
    rehearse(
      'run',
      taskFile,
      ...['--policy', 'reference', '--no-progress', '--concurrency', '1'],
      ...['--out', path.join(dir, 'runs'), ...extra],
    );
  /** The `tau2` item's verdict of each episode of the run. */
  async function verdicts(r: CliRun): Promise<CheckVerdict[]> {
    assert.equal(r.code, 0, r.out + r.err);
    const traceFile = /^trace: (.*)$/m.exec(r.out)?.[1];
    assert.ok(traceFile, r.out);
    const trace = await readCheckedTrace(traceFile);
    return trace.ends.map((e) => e.checks![0]);
  }

  it("with --judge, τ²'s evaluator asks it with the key from the environment; each assertion's verdict is in the detail and counts in the reward", async () => {
    met = true;
    const [pass] = await verdicts(await run('--judge', judge.url, '--judge-model', 'judge'));
    assert.equal(pass.passed, true, pass.detail);
    assert.match(
      pass.detail!,
      /^τ² reward 1; basis DB, COMMUNICATE, NL_ASSERTION; by component DB 1, NL_ASSERTION 1, COMMUNICATE 1; /,
    );
    assert.match(
      pass.detail!,
      /natural-language assertions 1 of 1 met by the judge: "The agent confirmed the task was created successfully" met \(judged true\)/,
    );
    assert.equal(judge.requests.length, 1);
    assert.equal(judge.requests[0].model, 'judge');
    assert.equal(judge.requests[0].authorization, `Bearer ${KEY}`);
    // τ²'s own prompt: the conversation and the expected outcomes.
    assert.match(judge.requests[0].messages[1].content ?? '', /expectedOutcomes:[\s\S]*confirmed/);

    met = false;
    const [fail] = await verdicts(await run('--judge', judge.url, '--judge-model', 'judge'));
    assert.equal(fail.passed, false, fail.detail);
    assert.match(
      fail.detail!,
      /^τ² reward 0; .*by component DB 1, NL_ASSERTION 0, COMMUNICATE 1; /,
    );
    assert.match(fail.detail!, /0 of 1 met by the judge: ".*" not met \(judged false\)/);
  });

  it('without --judge the item is not evaluated, as before; a judge that is down: not evaluated with the reason, and the run goes on', async () => {
    const [none] = await verdicts(await run());
    assert.equal(none.passed, null);
    assert.match(
      none.detail!,
      /^not evaluated: τ²'s reward of this task counts 1 natural-language assertion\(s\), which need a judge endpoint \(none is configured: --judge <url>\); basis DB, COMMUNICATE, NL_ASSERTION; /,
    );
    assert.equal(judge.requests.length, 0);

    const down = await startChatServer(() => 'never asked');
    const downUrl = down.url;
    await down.close();
    const r = await run('--judge', downUrl, '--judge-model', 'judge', '--episodes', '2');
    const ends = await verdicts(r);
    assert.equal(ends.length, 2, 'both episodes ran and were graded');
    for (const v of ends) {
      assert.equal(v.passed, null);
      assert.match(
        v.detail!,
        new RegExp(
          `^not evaluated: TAU2_JUDGE_UNREACHABLE: the judge at ${downUrl.replace(/[.]/g, '\\.')} \\(model judge\\) cannot be reached`,
        ),
      );
    }
  });
});
