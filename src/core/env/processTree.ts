import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';

/** Most processes looked at (a machine has far fewer; the bound keeps a scan from running away). */
const MAX_PROCESSES = 100_000;

/**
 * The descendants of a process (children, their children, ...), found now: on Linux from `/proc`,
 * elsewhere from `ps`. Servers started through a launcher that does not `exec` (`sh wrapper.sh` →
 * `node server.js`) leave their real process one level down; ending only the launcher would leave it
 * running, holding the pipes, and the run would never exit. Empty when nothing can be read.
 */
export async function descendantsOf(pid: number): Promise<number[]> {
  const parents = await parentTable();
  const children = new Map<number, number[]>();
  for (const [child, parent] of parents) {
    const list = children.get(parent);
    if (list) list.push(child);
    else children.set(parent, [child]);
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length && out.length < MAX_PROCESSES) {
    for (const child of children.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/** Sends a signal to each process that is still there; a process already gone is not an error. */
export function signalAll(pids: readonly number[], signal: NodeJS.Signals): number {
  let sent = 0;
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
      sent++;
    } catch {
      /* gone */
    }
  }
  return sent;
}

async function parentTable(): Promise<Map<number, number>> {
  const table = new Map<number, number>();
  if (process.platform === 'linux') {
    let entries: string[];
    try {
      entries = await fs.readdir('/proc');
    } catch {
      return table;
    }
    for (const name of entries.slice(0, MAX_PROCESSES)) {
      if (!/^\d+$/.test(name)) continue;
      try {
        // The field after the parenthesised command name: state, then the parent pid.
        const stat = await fs.readFile(`/proc/${name}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (Number.isInteger(ppid)) table.set(Number(name), ppid);
      } catch {
        /* ended meanwhile */
      }
    }
    return table;
  }
  if (process.platform === 'win32') return table;
  const text = await new Promise<string>((resolve) => {
    execFile(
      'ps',
      ['-A', '-o', 'pid=,ppid='],
      { timeout: 2_000, maxBuffer: 8 * 1024 * 1024 },
      (err, stdout) => resolve(err ? '' : stdout),
    );
  });
  for (const line of text.split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (Number.isInteger(pid) && Number.isInteger(ppid)) table.set(pid, ppid);
  }
  return table;
}
