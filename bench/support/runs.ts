import * as path from 'node:path';
import { rehearse as cli } from '../../test/support/cli';

/** Runs the CLI in-process (the tests' helper); throws with its stderr when it fails. */
export async function rehearse(...argv: string[]): Promise<string> {
  const r = await cli(...argv);
  if (r.code !== 0) throw new Error(`rehearse ${argv.join(' ')} exited ${r.code}:\n${r.err}`);
  return r.out;
}

/** `perDomain` held-out tasks (test split) of retail and of bank under `dir/tasks`; returns that folder. */
export async function heldOutTasks(dir: string, perDomain: number): Promise<string> {
  const tasks = path.join(dir, 'tasks');
  for (const domain of ['retail', 'bank'])
    await rehearse(
      'generate',
      domain,
      '--split',
      'test',
      '--count',
      String(perDomain),
      '--out',
      path.join(tasks, domain),
    );
  return tasks;
}

/** `rehearse run`'s arguments for the tasks with the embedded default policy on the CPU. */
export function defaultPolicyRun(
  tasks: string,
  out: string,
  kvCache: string,
  concurrency: number | string,
): string[] {
  return [
    'run',
    tasks,
    '--policy',
    'default',
    '--device',
    'cpu',
    '--kv-cache',
    kvCache,
    '--concurrency',
    String(concurrency),
    '--out',
    out,
    '--no-progress',
  ];
}
