// One write path, for runs played for real (real MCP servers): a run into a runs folder or a run
// folder that links out of .rehearsal/ is refused with PATH_OUTSIDE_WORKSPACE and writes nothing
// outside. The other write-path tests: test/unit/reliability-write-path.test.ts.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { openPolicyFor } from '../../src/core/runner/policyChoice';
import { runTasks } from '../../src/core/runner/runner';
import { loadTaskFile } from '../../src/core/tasks/format/loader';
import { openTaskEnvironment } from '../../src/core/tasks/taskEnvironment';
import { ensureServerBundles } from '../support/servers';
import { rehearse } from '../support/cli';
import { repoRoot } from '../support/paths';
import { listing, outside, useWritePathLayout } from '../support/writePathFixture';

const REPO = repoRoot();
const TASK = path.join(REPO, 'examples', 'tasks', 'retail-0000.task.json');

describe('one write path: writes stay inside .rehearsal/ or the --out named', function () {
  this.timeout(120_000);
  const { layout } = useWritePathLayout();

  it('`rehearse run` into a runs folder that links out of .rehearsal/: refused with what to do, nothing written outside', async () => {
    ensureServerBundles();
    const { away, runs } = await layout();
    await fs.symlink(away, runs);
    const r = await rehearse('run', TASK, '--policy', 'reference', '--out', runs, '--no-progress');
    assert.equal(r.code, 1, r.out);
    assert.equal(r.errLines.length, 1, r.err);
    assert.match(
      r.err,
      /^rehearse: Refusing to write .*trace\.jsonl: .*runs is a symbolic link to .*away\. The studio writes only inside .*ws\/\.rehearsal: remove the link, or name the folder you want written with --out\.$/,
    );
    assert.deepEqual(await listing(away), []);
  });

  it('a run whose run folder links out of .rehearsal/ is PATH_OUTSIDE_WORKSPACE; nothing is written outside', async () => {
    ensureServerBundles();
    const { away, runs } = await layout();
    await fs.mkdir(runs);
    await fs.symlink(away, path.join(runs, 'evil'));
    const task = await loadTaskFile(TASK);
    const policy = await openPolicyFor({ kind: 'reference' }, { tasks: [task.task] });
    await assert.rejects(
      runTasks({
        runsDir: runs,
        runId: 'evil',
        tasks: [task],
        policy,
        saveIndexAfterBytes: 0,
        openEnvironment: (t) => openTaskEnvironment(t, { workspaceFolder: REPO }),
      }),
      outside,
    );
    assert.deepEqual(await listing(away), []);
  });
});
