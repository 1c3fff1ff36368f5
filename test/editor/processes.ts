/**
 * Child processes of the harness. Each one is started as the leader of its own process group, so
 * that stopping it also stops what it spawned (code-server's extension host, Chromium's renderers);
 * and each is registered so that it is killed even when the harness dies on an error or a signal.
 */
import type { ChildProcess } from 'node:child_process';
import * as http from 'node:http';

const live = new Set<ChildProcess>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

/** Keeps track of a process started with `detached: true`, to stop it with {@link stopProcess}. */
export function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

/** Stops a process group: SIGTERM, then SIGKILL after `graceMs`. Resolves when the leader is gone. */
export async function stopProcess(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    killGroup(child, 'SIGKILL'); // the leader is gone; make sure its children are too
    live.delete(child);
    return;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killGroup(child, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  killGroup(child, 'SIGKILL'); // stragglers of the group
  live.delete(child);
}

/** Kills every tracked process group at once; safe in an `exit` handler. */
export function killAllNow(): void {
  for (const child of live) killGroup(child, 'SIGKILL');
  live.clear();
}

/** A TCP port that was free on the loopback interface a moment ago. */
export { freePort } from '../../src/core/base/freePort';

/** Polls `url` until it answers 200, the deadline passes, or `abort()` says to stop. */
export async function waitForHttp(
  url: string,
  timeoutMs: number,
  abort: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const why = abort();
    if (why) throw new Error(why);
    const status = await new Promise<number | undefined>((resolve) => {
      const req = http.get(url, { timeout: 2000 }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(undefined));
    });
    if (status === 200) return;
    if (Date.now() > deadline)
      throw new Error(
        `${url} did not answer within ${Math.round(timeoutMs / 1000)}s (last status: ${status ?? 'no connection'})`,
      );
    await new Promise((r) => setTimeout(r, 150));
  }
}
