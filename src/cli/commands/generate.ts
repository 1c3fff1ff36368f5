import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import { studioRoot } from '../../core/base/studioRoot';
import { mkdirInside, writeFileInside, writeRootOf } from '../../core/base/writePath';
import { generateTasks } from '../../core/tasks/generator';
import { TASK_FILE_SUFFIX } from '../../core/tasks/format/loader';
import type { TaskSplit } from '../../core/tasks/format/taskFile';
import { counted } from '../../core/base/counted';
import { STUDIO_FOLDER } from '../../core/trace/format/discover';
import { BUILTIN_GENERATORS } from '../../servers/generators';
import type { CliIO } from '../io';
import { outFolderArg } from '../outArg';
import { requireNumber } from '../../core/base/numbers';
import { OUTSIDE_NUMBERS } from '../../core/base/outsideNumbers';

const SPLITS: TaskSplit[] = ['train', 'validation', 'test'];
/** Seeds 0-499 are each built-in domain's tasks (docs/task-format.md); splits take 80/10/10 of them by seed. */
const DEFAULT_SEEDS = 500;
const SPLIT_SHARE: Record<TaskSplit, number> = { train: 0.8, validation: 0.1, test: 0.1 };

/**
 * `rehearse generate <domain> [--out <dir>] [--count N] [--start S] [--split train|validation|test]
 * [--demonstrations]`: writes seeded tasks of a built-in domain as task files (`<id>.task.json`), by
 * default into `.rehearsal/tasks/<domain>-<split>` (`-all` without a split) of the current folder.
 * `--demonstrations` leaves out the tasks tagged `no-demonstration` (`bank-foresight`'s refusals).
 */
export async function generateCommand(
  domain: string,
  options: {
    out?: string;
    count?: string;
    start?: string;
    split?: string;
    demonstrations?: boolean;
  },
  io: CliIO,
): Promise<number> {
  const generator = BUILTIN_GENERATORS[domain];
  if (!generator)
    throw new StudioError(
      'USAGE',
      `Unknown domain "${domain}"; built-in generators: ${Object.keys(BUILTIN_GENERATORS).join(', ')}.`,
    );
  // By default the tasks of the domain's first 500 seeds (its promised set), or that split's share of them.
  const split = SPLITS.includes(options.split as TaskSplit)
    ? (options.split as TaskSplit)
    : undefined;
  const count = requireNumber(
    options.count,
    OUTSIDE_NUMBERS.flagCount,
    split ? DEFAULT_SEEDS * SPLIT_SHARE[split] : DEFAULT_SEEDS,
    { text: true },
  );
  const start = requireNumber(options.start, OUTSIDE_NUMBERS.flagStart, 0, { text: true });
  if (options.split !== undefined && !SPLITS.includes(options.split as TaskSplit))
    throw new StudioError('USAGE', `--split must be one of ${SPLITS.join(', ')}.`);
  const out = outFolderArg(
    options.out ?? path.join(STUDIO_FOLDER, 'tasks', `${domain}-${options.split ?? 'all'}`),
    '--out',
    'the task files go into it',
  );
  const tasks = generateTasks(generator, {
    count,
    start,
    split: options.split as TaskSplit | undefined,
    demonstrations: options.demonstrations === true,
  });
  const root = writeRootOf(out);
  await mkdirInside(root, out);
  const schema = path
    .relative(path.resolve(out), path.join(studioRoot(), 'schemas', 'task.schema.json'))
    .split(path.sep)
    .join('/');
  for (const task of tasks) {
    const { $schema: _ignored, ...rest } = task;
    await writeFileInside(
      root,
      path.join(out, `${task.id}${TASK_FILE_SUFFIX}`),
      JSON.stringify({ $schema: schema, ...rest }, null, 2) + '\n',
    );
  }
  io.out(`wrote ${counted(tasks.length, `${domain} task`)} to ${out}`);
  return 0;
}
