import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../src/cli/program';
import { loadTasks } from '../../src/core/tasks/format/loader';
import { BUILTIN_GENERATORS } from '../../src/servers/generators';
import { REPO, ensureServerBundles } from '../support/servers';
import { useTempDir } from '../support/tempDir';
import { rehearse } from '../support/cli';

const EXAMPLES = path.join(REPO, 'examples', 'tasks');

/** `rehearse verify <tasks> --workspace <folder> --json`: its exit code, report and stderr. */
async function verify(tasks: string, workspace: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['verify', tasks, '--workspace', workspace, '--json'], {
    out: (s) => out.push(s),
    err: (s) => err.push(s),
    color: false,
  });
  const result = JSON.parse(out.join('\n')) as {
    tasks: { id: string; success: boolean | null; reward: number | null }[];
    failed: number;
  };
  return { code, result, err: err.join('\n') };
}

describe('examples/tasks', function () {
  this.timeout(60_000);
  const tmp = useTempDir('rehearsal-user-workspace-');
  before(() => {
    ensureServerBundles();
  });

  it('holds tasks of both built-in domains and of two third-party npm servers', async () => {
    const tasks = await loadTasks([EXAMPLES]);
    const domains = new Set(tasks.map((t) => t.task.domain));
    for (const d of ['retail', 'bank', 'memory', 'filesystem', 'bfcl'])
      assert.ok(domains.has(d), `no ${d} example`);
  });

  it('built-in examples are exactly what the generators give for their seeds', async () => {
    for (const { task } of await loadTasks([EXAMPLES])) {
      const generator = BUILTIN_GENERATORS[task.domain ?? ''];
      if (!generator) continue;
      const { $schema: _a, ...fresh } = generator.generate(task.seed!);
      const { $schema: _b, ...stored } = task;
      assert.deepEqual(
        stored,
        fresh,
        `${task.id} drifted from its generator: regenerate it with \`rehearse generate ${task.domain} --start ${task.seed} --count 1 --out examples/tasks\``,
      );
    }
  });

  it('the BFCL example is exactly what `rehearse import bfcl base` writes for its record', async () => {
    const out = tmp();
    const r = await rehearse('import', 'bfcl', 'base', '--limit', '1', '--out', out);
    assert.equal(r.code, 0, r.err);
    const name = 'multi_turn_base_0.task.json';
    assert.deepEqual(
      JSON.parse(await fs.readFile(path.join(EXAMPLES, name), 'utf8')),
      JSON.parse(await fs.readFile(path.join(out, 'tasks', name), 'utf8')),
      'regenerate it: rehearse import bfcl base --limit 1 --out <dir>, then copy tasks/multi_turn_base_0.task.json',
    );
  });

  it('all pass their own checks with `rehearse verify examples/tasks` from the repository root', async () => {
    const { code, result, err } = await verify(EXAMPLES, REPO);
    assert.equal(code, 0, JSON.stringify(result, null, 2) + err);
    assert.equal(result.failed, 0);
    assert.ok(result.tasks.find((t) => t.id === 'memory-remember-colleague')?.success);
    assert.ok(result.tasks.find((t) => t.id === 'files-todo-list')?.success);
  });

  it("the third-party servers' tasks pass in a user's workspace, which has no node_modules (issue 27)", async () => {
    // They used to start `${workspaceFolder}/node_modules/@modelcontextprotocol/server-*`, there only
    // in this repository; the studio now carries both servers (`{ "builtin": "filesystem" }`).
    const workspace = tmp();
    for (const id of ['files-todo-list', 'memory-remember-colleague'])
      await fs.copyFile(
        path.join(EXAMPLES, `${id}.task.json`),
        path.join(workspace, `${id}.task.json`),
      );
    const { code, result, err } = await verify(workspace, workspace);
    assert.equal(code, 0, JSON.stringify(result, null, 2) + err);
    assert.deepEqual(result.tasks.map((t) => [t.id, t.success]).sort(), [
      ['files-todo-list', true],
      ['memory-remember-colleague', true],
    ]);
  });
});
