import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import { studioRoot } from '../../core/base/studioRoot';
import { generateTasks } from '../../core/tasks/generator';
import { TASK_FILE_SUFFIX } from '../../core/tasks/loader';
import type { TaskSplit } from '../../core/tasks/taskFile';
import { BUILTIN_GENERATORS } from '../../servers/generators';
import type { CliIO } from '../io';

const SPLITS: TaskSplit[] = ['train', 'validation', 'test'];

/**
 * `rehearse generate <domain> --out <dir> [--count N] [--start S] [--split train|validation|test]`:
 * writes seeded tasks of a built-in domain as task files (`<id>.task.json`).
 */
export async function generateCommand(domain: string, options: { out?: string; count?: string; start?: string; split?: string }, io: CliIO): Promise<number> {
  const generator = BUILTIN_GENERATORS[domain];
  if (!generator) throw new StudioError('USAGE', `Unknown domain "${domain}"; built-in domains: ${Object.keys(BUILTIN_GENERATORS).join(', ')}.`);
  if (!options.out) throw new StudioError('USAGE', 'Missing --out <dir>: where to write the task files.');
  const count = Number(options.count ?? 500);
  const start = Number(options.start ?? 0);
  if (!Number.isInteger(count) || count < 1) throw new StudioError('USAGE', `--count must be a positive integer, not "${options.count}".`);
  if (!Number.isInteger(start) || start < 0) throw new StudioError('USAGE', `--start must be an integer ≥ 0, not "${options.start}".`);
  if (options.split !== undefined && !SPLITS.includes(options.split as TaskSplit)) throw new StudioError('USAGE', `--split must be one of ${SPLITS.join(', ')}.`);
  const tasks = generateTasks(generator, { count, start, split: options.split as TaskSplit | undefined });
  await mkdir(options.out, { recursive: true });
  const schema = path.relative(path.resolve(options.out), path.join(studioRoot(), 'schemas', 'task.schema.json')).split(path.sep).join('/');
  for (const task of tasks) {
    const { $schema: _ignored, ...rest } = task;
    await writeFile(path.join(options.out, `${task.id}${TASK_FILE_SUFFIX}`), JSON.stringify({ $schema: schema, ...rest }, null, 2) + '\n');
  }
  io.out(`wrote ${tasks.length} ${domain} task(s) to ${options.out}`);
  return 0;
}
