/**
 * A mocha root hook (loaded by .mocharc.json): the suite must exit by itself, so whatever a test
 * leaves running (a child process, a server, a socket, a timer) is a failure that names it, instead
 * of a run that never ends or an `exit: true` that hides it.
 */
const GRACE_MS = 20_000;

interface Described {
  constructor?: { name?: string };
  spawnfile?: string;
  spawnargs?: string[];
  pid?: number;
  localPort?: number;
  remotePort?: number;
  fd?: number;
}

/** One line per open handle, with what identifies it (the command of a child, the port of a socket). */
function describeHandles(): string[] {
  const handles =
    (process as unknown as { _getActiveHandles?: () => Described[] })._getActiveHandles?.() ?? [];
  return handles.map((h) => {
    const parts = [h.constructor?.name ?? 'handle'];
    if (h.spawnfile)
      parts.push(
        `pid ${h.pid}: ${[h.spawnfile, ...(h.spawnargs ?? []).slice(1)].join(' ').slice(0, 300)}`,
      );
    if (h.localPort !== undefined)
      parts.push(`port ${h.localPort}${h.remotePort ? ` → ${h.remotePort}` : ''}`);
    if (h.fd !== undefined && h.fd > 2) parts.push(`fd ${h.fd}`);
    return parts.join(' ');
  });
}

export const mochaHooks = {
  afterAll(): void {
    setTimeout(() => {
      const resources = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap');
      console.error(
        `\nThe tests left ${resources.length} resource(s) open ${GRACE_MS / 1000} s after the last one, so mocha could not exit: ${resources.join(', ')}`,
      );
      for (const line of describeHandles()) console.error(`  ${line}`);
      // Mocha sets the exit code to its failure count in an 'exit' listener; this one runs after it.
      process.on('exit', () => {
        process.exitCode = 1;
      });
      process.exit(1);
    }, GRACE_MS).unref();
  },
};
