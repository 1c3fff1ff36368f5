// A disk that fills while a run writes its trace: a real 64 KiB tmpfs as the runs folder, and the real
// CLI in a process group of its own (its MCP servers and policy host in it), so that a process left
// behind is seen. The run must end promptly with TRACE_WRITE_FAILED, end every process it started,
// and leave a trace that reads to its last whole line with no torn line after it.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import { TRACE_FILE } from '../../src/core/trace/format/discover';
import { startGroup, killGroup } from '../support/crash/kill';
import { ensurePolicyHostBundle, ensureServerBundles, REPO } from '../support/servers';
import { randomTestModel } from '../support/testModels';
import { useTempDir } from '../support/tempDir';
import { rehearse } from '../support/cli';

/** The most a run may take to exit once its write failed: the hang this guards against lasted the episode timeout (10 min). */
const PROMPT_EXIT_MS = 15_000;
/** The whole child, start to exit; past it the test kills the group and fails. */
const CHILD_DEADLINE_MS = 90_000;

const RETAIL = path.join(REPO, 'examples', 'tasks', 'retail-0000.task.json');

/** The size of the tmpfs the runs folder is: the trace can hold no more. */
const DISK_BYTES = 64 * 1024;

/**
 * Mounts a tmpfs of `size` on `dir`. Only root may; anyone else skips with the reason. As root a
 * failure is the test's failure, never a skip (a skipped test passes nothing).
 */
function mountSmallTmpfs(context: Mocha.Context, dir: string, size: string): void {
  if (process.getuid?.() !== 0) {
    console.log(`      skipped: mounting a tmpfs needs root (uid ${process.getuid?.()})`);
    context.skip();
  }
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  } catch {
    // Not mounted (the test skipped or the mount failed): nothing to undo.
  }
}

/** Whether any process of the group led by `pid` is still alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits up to `ms` for the group to be gone; true when it is. */
async function groupGone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (groupAlive(pid)) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** The processes of a group, for a failure message. */
function groupProcesses(pid: number): string {
  try {
    return execFileSync('ps', ['-o', 'pid,args', '-g', String(pid)], { encoding: 'utf8' });
  } catch {
    return '(none)';
  }
}

/**
 * Plays `rehearse run` (or with `command` given, another command that writes a trace, such as
 * `replay <trace> --policy <model>`) into a full-to-be tmpfs and checks what a user would see afterwards.
 */
async function runOnFullDisk(
  runsDir: string,
  cwd: string,
  policyArgs: string[],
  command: string[] = ['run', RETAIL, '--episodes', '8'],
): Promise<void> {
  const argv = [
    process.execPath,
    path.join(REPO, 'out', 'src', 'cli', 'main.js'),
    ...command,
    ...policyArgs,
    '--out',
    runsDir,
    '--no-progress',
  ];
  const { child, exited } = startGroup(argv, { cwd });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  const deadline = setTimeout(() => killGroup(child.pid), CHILD_DEADLINE_MS);
  let status;
  try {
    status = await exited;
  } finally {
    clearTimeout(deadline);
  }
  const exitedAt = Date.now();
  const leftOver = groupProcesses(child.pid!);
  const gone = await groupGone(child.pid!, 3000);
  killGroup(child.pid);
  assert.ok(gone, `processes of the run still alive after it exited:\n${leftOver}`);
  assert.deepEqual(
    status,
    { code: 1, signal: null },
    `rehearse ${command[0]} must exit 1 by itself (killed after ${CHILD_DEADLINE_MS / 1000} s otherwise); stderr:\n${stderr}`,
  );
  assert.match(stderr, /TRACE_WRITE_FAILED: Could not write to .*ENOSPC/);
  assert.doesNotMatch(stderr, /internal error|closed on garbage collection/);

  const [runId] = await fs.readdir(runsDir);
  const traceFile = path.join(runsDir, runId, TRACE_FILE);
  const bytes = await fs.readFile(traceFile);
  assert.ok(bytes.length > 0, 'events were written before the disk filled');
  assert.equal(bytes.at(-1), 0x0a, 'the trace ends with a whole line: no partial line left');
  const { events, skipped } = await readTraceEvents(traceFile);
  assert.deepEqual(skipped, [], 'every line of the trace reads');
  assert.equal(events[0].type, 'run');
  assert.ok(
    events.some((e) => e.type === 'episode' && e.tools?.length),
    'episodes had started when the disk filled',
  );
  // The trace's last change (the cut back to whole lines) is when the write failed.
  const { mtimeMs } = await fs.stat(traceFile);
  assert.ok(
    exitedAt - mtimeMs < PROMPT_EXIT_MS,
    `exited ${Math.round(exitedAt - mtimeMs)} ms after the failed write`,
  );
}

/**
 * How many episodes of RETAIL fill the disk with their `episode` events alone, whatever a policy
 * writes: the event holds the task's instruction and tools, the same for every policy, and each
 * episode writes one as it starts. Measured on a reference run on an ordinary disk (`folder`).
 */
async function episodesThatFillTheDisk(folder: string): Promise<number> {
  const recorded = await rehearse(
    'run',
    RETAIL,
    '--policy',
    'reference',
    '--out',
    folder,
    '--no-progress',
  );
  assert.equal(recorded.code, 0, recorded.err);
  const [run] = await fs.readdir(folder);
  const episodeLine = (await fs.readFile(path.join(folder, run, TRACE_FILE), 'utf8'))
    .split('\n')
    .find((line) => line && (JSON.parse(line) as { type: string }).type === 'episode')!;
  return Math.floor(DISK_BYTES / (Buffer.byteLength(episodeLine) + 1)) + 1;
}

describe('reliability: the disk fills while a run writes its trace (a real 64 KiB tmpfs)', function () {
  this.timeout(180_000);
  let runsDir = '';
  // Registered before the scratch folder's own hooks, so that it is unmounted before it is removed.
  afterEach(() => unmount(runsDir));
  const scratch = useTempDir('disk-full-');

  before(() => ensureServerBundles());
  beforeEach(async function () {
    runsDir = path.join(scratch(), 'runs');
    await fs.mkdir(runsDir);
    mountSmallTmpfs(this, runsDir, `${DISK_BYTES / 1024}k`);
  });

  for (const concurrency of [1, 8])
    it(`rehearse run --concurrency ${concurrency} (reference policy, real servers): exits 1 promptly with TRACE_WRITE_FAILED, no process left, the trace reads to its last whole line`, async () => {
      await runOnFullDisk(runsDir, scratch(), [
        '--policy',
        'reference',
        '--concurrency',
        String(concurrency),
      ]);
    });

  it('rehearse run --concurrency 8 with a model folder: the policy host ends with the run, as do the servers', async function () {
    this.timeout(600_000);
    ensurePolicyHostBundle();
    const modelDir = await randomTestModel(1);
    // The random model may end every episode at once: enough episodes that their start events alone
    // outgrow the disk, so that the run fills it whatever the model writes.
    const episodes = await episodesThatFillTheDisk(path.join(scratch(), 'measure'));
    await runOnFullDisk(
      runsDir,
      scratch(),
      ['--policy', modelDir, '--device', 'cpu', '--concurrency', '8'],
      ['run', RETAIL, '--episodes', String(episodes)],
    );
  });

  it('rehearse replay --concurrency 8 with a model folder: exits 1 promptly with TRACE_WRITE_FAILED, the trace reads to its last whole line', async function () {
    this.timeout(600_000);
    ensurePolicyHostBundle();
    const modelDir = await randomTestModel(1);
    // The recorded run lies on an ordinary disk; only its replay's trace goes to the full one.
    const sourceRuns = path.join(scratch(), 'source');
    const recorded = await rehearse(
      'run',
      RETAIL,
      '--policy',
      'reference',
      '--episodes',
      '8',
      '--out',
      sourceRuns,
      '--no-progress',
    );
    assert.equal(recorded.code, 0, recorded.err);
    const [sourceRun] = await fs.readdir(sourceRuns);
    await runOnFullDisk(
      runsDir,
      scratch(),
      ['--policy', modelDir, '--device', 'cpu', '--concurrency', '8'],
      ['replay', path.join(sourceRuns, sourceRun, TRACE_FILE)],
    );
  });
});
