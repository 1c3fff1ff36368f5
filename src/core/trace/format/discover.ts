import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../base/errors';

/** The studio's folder inside a workspace. */
export const STUDIO_FOLDER = '.rehearsal';
/** File name of a run's trace inside `.rehearsal/runs/<runId>/`. */
export const TRACE_FILE = 'trace.jsonl';
/** File name of a run's annotations, beside its trace. */
export const ANNOTATIONS_FILE = 'annotations.jsonl';

/** The runs folder of a workspace. */
export function runsFolder(workspace: string): string {
  return path.join(workspace, STUDIO_FOLDER, 'runs');
}

/** Every `runs/<runId>/trace.jsonl` under a workspace, newest run id first; `except` skips files without a look. */
export async function findRunTraces(
  workspace: string,
  except?: (file: string) => boolean,
): Promise<string[]> {
  return tracesInRunsFolder(runsFolder(workspace), except);
}

/** Every `<runId>/trace.jsonl` in a runs folder (a workspace's, or `--out`), newest first, but those `except` names. */
export async function tracesInRunsFolder(
  runs: string,
  except?: (file: string) => boolean,
): Promise<string[]> {
  let names: string[];
  try {
    names = await fs.readdir(runs);
  } catch {
    return [];
  }
  const found: string[] = [];
  for (const name of names.sort().reverse()) {
    const file = path.join(runs, name, TRACE_FILE);
    if (except?.(file)) continue;
    try {
      if ((await fs.stat(file)).isFile()) found.push(file);
    } catch {
      /* a run folder without a trace yet */
    }
  }
  return found;
}

/**
 * Resolves what a person passed as a trace: a trace file, a run folder, a `.rehearsal` folder or a
 * workspace (all its runs). Throws a coded error that says what was expected.
 */
export async function resolveTraceArgument(arg: string): Promise<string[]> {
  let stat;
  try {
    stat = await fs.stat(arg);
  } catch {
    throw new StudioError(
      'TRACE_NOT_FOUND',
      `${arg}: no such file or folder. Pass a trace.jsonl file, a run folder, or a workspace with .rehearsal/runs.`,
    );
  }
  if (stat.isFile()) return [arg];
  const direct = path.join(arg, TRACE_FILE);
  if (await isFile(direct)) return [direct];
  const inRuns = await tracesInRunsFolder(arg);
  if (inRuns.length) return inRuns;
  const workspace = path.basename(arg) === STUDIO_FOLDER ? path.dirname(arg) : arg;
  const all = await findRunTraces(workspace);
  if (all.length) return all;
  throw new StudioError(
    'TRACE_NOT_FOUND',
    `${arg} holds no trace: expected ${TRACE_FILE}, run folders holding one, or runs under ${path.join(STUDIO_FOLDER, 'runs')}.`,
  );
}

async function isFile(p: string): Promise<boolean> {
  try {
    return (await fs.stat(p)).isFile();
  } catch {
    return false;
  }
}

const MAX_TRACES_NAMED = 10;

/**
 * Resolves a trace argument that must name exactly one trace. When it holds several (a runs folder,
 * a workspace), the usage error lists them, newest first, so the next command can name one.
 */
export async function resolveOneTrace(arg: string): Promise<string> {
  const files = await resolveTraceArgument(arg);
  if (files.length === 1) return files[0];
  const named = files.slice(0, MAX_TRACES_NAMED).map((f) => path.relative(process.cwd(), f) || f);
  const more =
    files.length > MAX_TRACES_NAMED ? `, and ${files.length - MAX_TRACES_NAMED} older` : '';
  throw new StudioError(
    'USAGE',
    `${arg} holds ${files.length} traces (newest first): ${named.join(', ')}${more}. Pass one of them, or its run folder.`,
  );
}
