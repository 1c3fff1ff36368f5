import { statSync } from 'node:fs';
import * as path from 'node:path';
import { counted } from '../core/base/counted';
import { StudioError } from '../core/base/errors';
import { mkdirInside, writeFileInside, writeRootOf } from '../core/base/writePath';
import type { TaskFault } from '../core/tasks/format/loader';
import type { LoadedTask, TaskFile } from '../core/tasks/format/taskFile';
import type { RecordedExample } from '../core/protocol/types';
import { groundTask } from '../core/training/groundedTasks';
import { outFolderArg } from './outArg';

/** Where `verify --examples-out` writes each task: the folder, and one file per task, in order. */
export interface ExamplesOutPlan {
  /** The folder as the user named it. */
  out: string;
  targets: string[];
}

/** A file's identity on disk (device and inode), so that a link or another spelling is the same file. */
function identity(file: string): string | undefined {
  try {
    const s = statSync(file);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * Where each task goes under `--examples-out`: the folder, under the task file's own name. Checked
 * before anything plays: the folder must be one (or can be made), no two tasks may share a name
 * there, and no target may be an input task file (by identity on disk, so through links too).
 */
export function planExamplesOut(out: string, tasks: readonly LoadedTask[]): ExamplesOutPlan {
  outFolderArg(out, '--examples-out', 'the task files with their examples go into it');
  const dir = path.resolve(out);
  const inputs = new Map<string, string>();
  for (const t of tasks) {
    const id = identity(t.file);
    if (id) inputs.set(id, t.file);
  }
  const byTarget = new Map<string, string>();
  const targets = tasks.map((t) => {
    const target = path.join(dir, path.basename(t.file));
    const other = byTarget.get(target);
    if (other)
      throw new StudioError(
        'USAGE',
        `--examples-out ${out}: ${other} and ${t.file} would both be written to ${target}. Verify them into separate folders, or rename one.`,
      );
    byTarget.set(target, t.file);
    const id = identity(target);
    const input = id && inputs.get(id);
    if (input)
      throw new StudioError(
        'USAGE',
        `--examples-out ${out} would overwrite the input task file ${input}. Name another folder.`,
      );
    return target;
  });
  return { out, targets };
}

/** Why a task was written without the reference's examples. */
export type WithoutExamples =
  | 'no reference solution'
  | 'reference fails its checks'
  | 'reference could not be played'
  | 'reference makes no tool call'
  | 'no example fits the task file';

/** One task's outcome under `--examples-out`. */
export interface ExampleTaskOutcome {
  id: string;
  /** The reference's examples when it passed its checks; why not otherwise. */
  examples: RecordedExample[] | WithoutExamples;
}

/** What `--examples-out` wrote. */
export interface ExamplesOutSummary {
  folder: string;
  written: number;
  /** Tasks written with the reference's calls among their examples. */
  withExamples: number;
  /** The others, each with why. */
  without: { id: string; why: WithoutExamples }[];
  /** Tasks where some examples were left out to keep the task loadable, with how many and why. */
  leftOut: { id: string; count: number; fault: TaskFault }[];
}

/**
 * `$schema` as the task file at its new place names the same file: a relative path is resolved
 * against the folder it was read from and made relative to the one it is written to.
 */
function movedSchema(schema: string | undefined, from: string, to: string): string | undefined {
  if (schema === undefined || /^[a-z][a-z0-9+.-]*:/i.test(schema) || path.isAbsolute(schema))
    return schema;
  return path
    .relative(path.dirname(to), path.resolve(path.dirname(from), schema))
    .split(path.sep)
    .join('/');
}

/** The task as written: its own keys in order, `$schema` moved, examples when it got them. */
function taskText(task: TaskFile, from: string, to: string): string {
  const schema = movedSchema(task.$schema, from, to);
  const moved = schema === undefined ? task : { ...task, $schema: schema };
  return JSON.stringify(moved, null, 2) + '\n';
}

/**
 * Writes every task under the plan's folder, through the one write path: with the reference's
 * calls and real responses added to its examples where its reference passed its checks
 * (`groundTask`), else as it was.
 */
export async function writeExamplesOut(
  plan: ExamplesOutPlan,
  tasks: readonly LoadedTask[],
  outcomes: readonly ExampleTaskOutcome[],
): Promise<ExamplesOutSummary> {
  const root = writeRootOf(plan.out);
  await mkdirInside(root, plan.out);
  const summary: ExamplesOutSummary = {
    folder: plan.out,
    written: 0,
    withExamples: 0,
    without: [],
    leftOut: [],
  };
  for (const [i, loaded] of tasks.entries()) {
    const outcome = outcomes[i];
    let task = loaded.task;
    let why: WithoutExamples | undefined;
    if (typeof outcome.examples === 'string') why = outcome.examples;
    else if (!outcome.examples.length) why = 'reference makes no tool call';
    else {
      const grounded = groundTask(task, outcome.examples);
      task = grounded.task;
      if (grounded.leftOut) summary.leftOut.push({ id: task.id, ...grounded.leftOut });
      if (!grounded.added && !grounded.present) why = 'no example fits the task file';
    }
    if (why) summary.without.push({ id: task.id, why });
    else summary.withExamples++;
    await writeFileInside(root, plan.targets[i], taskText(task, loaded.file, plan.targets[i]));
    summary.written++;
  }
  return summary;
}

/** The summary's lines: the counts with why, and each task whose examples did not all fit. */
export function examplesOutLines(summary: ExamplesOutSummary): string[] {
  const reasons = new Map<string, number>();
  for (const w of summary.without) reasons.set(w.why, (reasons.get(w.why) ?? 0) + 1);
  const why = [...reasons].map(([reason, n]) => `${reason} ×${n}`).join(', ');
  const lines = [
    `${counted(summary.withExamples, 'task')} written with examples, ${summary.without.length} without${why ? `: ${why}` : ''} (in ${summary.folder})`,
  ];
  for (const l of summary.leftOut)
    lines.push(
      `${l.id}: ${counted(l.count, 'example')} left out, the task would not load with ${l.count === 1 ? 'it' : 'them'} (${l.fault.path} ${l.fault.message})`,
    );
  return lines;
}
