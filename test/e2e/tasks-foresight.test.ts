// The bank-foresight family through the real CLI and the real bank server on its foresight world:
// references that pass their own checks, a refused attempt that fails, and logged write calls whose
// real responses, ok and refused, become rehearse rows.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import { rehearse } from '../support/cli';
import { ensureServerBundles } from '../support/servers';
import { useTempDir } from '../support/tempDir';

const FAMILIES = ['bank-foresight', 'bank-foresight-twin', 'bank-foresight-logging'];
const COUNT = 20;

interface VerifyReport {
  tasks: { id: string; success: boolean | null; failed: string[] }[];
  failed: number;
}

async function generate(family: string, out: string): Promise<string> {
  const r = await rehearse('generate', family, '--count', String(COUNT), '--out', out);
  assert.equal(r.code, 0, r.err);
  return out;
}

async function verify(dir: string): Promise<VerifyReport> {
  const r = await rehearse('verify', dir, '--json');
  return JSON.parse(r.out) as VerifyReport;
}

async function readTasks(dir: string): Promise<[string, TaskFile][]> {
  const files = (await fs.readdir(dir)).sort().map((f) => path.join(dir, f));
  return Promise.all(
    files.map(async (f) => [f, JSON.parse(await fs.readFile(f, 'utf8')) as TaskFile] as const),
  ) as Promise<[string, TaskFile][]>;
}

const isRefused = (t: TaskFile) => t.tags!.includes('foresight-refused');

describe('tasks: the bank-foresight family on the real bank server', function () {
  this.timeout(120_000);
  const tmp = useTempDir('rehearsal-foresight-');
  before(() => {
    ensureServerBundles();
  });

  it(`rehearse verify: the reference of each of ${COUNT} tasks of every variant passes its own checks`, async () => {
    for (const family of FAMILIES) {
      const report = await verify(await generate(family, path.join(tmp(), family)));
      assert.equal(report.tasks.length, COUNT, family);
      assert.equal(report.failed, 0, `${family}: ${JSON.stringify(report.tasks)}`);
      assert.ok(
        report.tasks.every((t) => t.success === true),
        family,
      );
    }
  });

  it('an attempt that the rule refuses fails the task, though the server changed nothing', async () => {
    const dir = await generate('bank-foresight', path.join(tmp(), 'attempts'));
    const logged = await readTasks(
      await generate('bank-foresight-logging', path.join(tmp(), 'log')),
    );
    // Every task played blind: the logging reference, which attempts every transfer.
    for (const [[file, task], [, log]] of (await readTasks(dir)).map(
      (t, i) => [t, logged[i]] as const,
    ))
      await fs.writeFile(file, JSON.stringify({ ...task, reference: log.reference }));
    const tasks = new Map((await readTasks(dir)).map(([, t]) => [t.id, t]));
    const report = await verify(dir);
    const refused = report.tasks.filter((t) => isRefused(tasks.get(t.id)!));
    assert.ok(refused.length >= COUNT / 4, `${refused.length} refused tasks`);
    for (const t of report.tasks) {
      if (!isRefused(tasks.get(t.id)!)) {
        assert.equal(t.success, true, t.id);
        continue;
      }
      // Its balance and the write log are unchanged and its answer gives the reason; the attempt alone fails it.
      assert.equal(t.success, false, t.id);
      assert.deepEqual(
        t.failed.map((f) => f.split(':')[0]),
        ['no-transfer_between_accounts'],
        t.id,
      );
    }
  });

  it('logging: run --policy reference, then export --roles rehearse, gives rows whose targets are the real ok and refused responses', async () => {
    const dir = await generate('bank-foresight-logging', path.join(tmp(), 'log'));
    const tasks = new Map((await readTasks(dir)).map(([, t]) => [t.id, t]));
    const runs = path.join(tmp(), 'runs');
    const run = await rehearse('run', dir, '--policy', 'reference', '--out', runs, '--no-progress');
    assert.equal(run.code, 0, run.err);
    const out = path.join(tmp(), 'rows.jsonl');
    const exported = await rehearse('export', runs, '--roles', 'rehearse', '--out', out);
    assert.equal(exported.code, 0, exported.err);
    const rows = (await fs.readFile(out, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as DatasetRow);
    assert.equal(rows.length, COUNT, 'one rehearse row per attempted transfer');
    let refusals = 0;
    for (const row of rows) {
      const task = tasks.get(row.task ?? '')!;
      assert.equal(row.role, 'rehearse');
      // The rehearse role sees the request, whose words and ids carry the rule's inputs.
      assert.ok(
        row.messages.some((m) => m.content.includes(task.turns[0].user)),
        `${row.task}: the request is not in the prompt`,
      );
      if (isRefused(task)) {
        refusals++;
        assert.match(row.target, /"code":"TRANSFER_RESTRICTED"/, row.task);
        assert.match(row.target, /certificate of deposit|retirement account|joint account/);
      } else {
        assert.match(row.target, /"status":"completed"/, row.task);
      }
    }
    assert.ok(refusals >= COUNT / 4 && refusals <= (3 * COUNT) / 4, `${refusals} refusals`);
  });
});
