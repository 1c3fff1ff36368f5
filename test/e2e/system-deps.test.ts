// scripts/ensure-system-deps.sh waits for Debian's package lock instead of failing at once (CI's
// first run once exited 100 because another apt held it). The wait is tested on a lock file of its
// own, held open by a real process, as apt's are.
import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO } from '../support/servers';
import { useTempDir } from '../support/tempDir';

describe('ensure-system-deps.sh: the package lock', function () {
  this.timeout(30_000);
  const tmp = useTempDir();
  let holder: ChildProcess | undefined;
  afterEach(() => {
    holder?.kill();
    holder = undefined;
  });

  /** A process that keeps `file` open for `seconds`, as apt keeps its lock files. */
  const holdOpen = (file: string, seconds: number): ChildProcess => {
    writeFileSync(file, '');
    const fd = openSync(file, 'r');
    const child = spawn('sleep', [String(seconds)], { stdio: [fd, 'ignore', 'ignore'] });
    closeSync(fd);
    return child;
  };
  const waitForLock = (lock: string, waitSeconds: number) =>
    spawnSync(
      'bash',
      [
        '-c',
        `. ${JSON.stringify(path.join(REPO, 'scripts', 'wait-for-package-lock.sh'))}; wait_for_package_lock`,
      ],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          PACKAGE_LOCK_FILES: lock,
          PACKAGE_LOCK_WAIT_S: String(waitSeconds),
          PACKAGE_LOCK_POLL_S: '1',
        },
      },
    );

  it('waits while another program holds it, saying who, and goes on once it is free', () => {
    const lock = path.join(tmp(), 'lock-frontend');
    holder = holdOpen(lock, 2);
    const r = waitForLock(lock, 20);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        `^Waiting up to 20s for Debian's package lock, held by: ${holder.pid} \\(sleep\\)$`,
        'm',
      ),
    );
    assert.match(r.stdout, /^The package lock is free after [1-9]\d*s\.$/m);
  });

  it('gives up after its bound and says what to do', () => {
    const lock = path.join(tmp(), 'lock-frontend');
    holder = holdOpen(lock, 20);
    const r = waitForLock(lock, 1);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      new RegExp(`^The package lock is still held after 1s by: ${holder.pid} \\(sleep\\)\\.$`, 'm'),
    );
    assert.match(
      r.stderr,
      /Let that program finish \(or stop it\), then run this command again; PACKAGE_LOCK_WAIT_S=<seconds> waits longer\./,
    );
  });

  it('does not wait at all when nobody holds it', () => {
    const lock = path.join(tmp(), 'lock-frontend');
    writeFileSync(lock, '');
    const r = waitForLock(lock, 20);
    assert.deepEqual([r.status, r.stdout, r.stderr], [0, '', '']);
  });
});
