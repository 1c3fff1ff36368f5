import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../base/errors';
import { studioRoot } from '../base/studioRoot';
import { didYouMean } from '../base/suggest';
import { TASK_FILE_SUFFIX as SUFFIX } from './format/loader';

/** The sample tasks that ship with the studio (built-in domains, npm servers), as the editor offers them. */
export function sampleTasksFolder(): string {
  return path.join(studioRoot(), 'examples', 'tasks');
}

/** The ids of the sample tasks (`retail-0012`, ...), sorted; empty when the folder is missing. */
export function sampleTaskIds(): string[] {
  try {
    return readdirSync(sampleTasksFolder())
      .filter((n) => n.endsWith(SUFFIX))
      .map((n) => n.slice(0, -SUFFIX.length))
      .sort();
  } catch {
    return [];
  }
}

/** The file of a sample task named by its id (`retail-0012`), or undefined when no sample has that id. */
export function sampleTaskFile(id: string): string | undefined {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id) || id.includes('..')) return undefined;
  const file = path.join(sampleTasksFolder(), `${id}${SUFFIX}`);
  return existsSync(file) ? file : undefined;
}

/**
 * Task arguments as a person types them: a path that exists stays as it is; a sample id
 * (`retail-0012`, as the editor lists the samples) becomes that sample's file. Anything else is a
 * TASK_UNREADABLE error that names the closest sample id, or how to list them.
 */
export function resolveTaskArguments(args: readonly string[]): string[] {
  return args.map((arg) => {
    if (existsSync(arg)) return arg;
    const sample = sampleTaskFile(arg);
    if (sample) return sample;
    const ids = sampleTaskIds();
    const near = didYouMean(arg.replace(/\.task\.json$/, ''), ids);
    const hint = near
      ? ` Did you mean the sample task ${near}?`
      : ids.length
        ? ` Pass a task file (*.task.json), a folder of them, or a sample task id: ${ids.join(', ')}.`
        : ' Pass a task file (*.task.json) or a folder of them.';
    throw new StudioError('TASK_UNREADABLE', `${arg} does not exist.${hint}`);
  });
}
