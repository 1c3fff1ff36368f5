import { statSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../core/base/errors';
import { runsFolder } from '../core/trace/discover';

/**
 * The runs folder a command writes into: `--out` (created when missing) or `.rehearsal/runs` of the
 * current folder. An `--out` that is a file is a usage error before anything starts.
 */
export function runsFolderArg(out: string | undefined, option = '--out'): string {
  if (out === undefined) return runsFolder(process.cwd());
  const dir = path.resolve(out);
  let isFile = false;
  try { isFile = !statSync(dir).isDirectory(); } catch { /* missing: created by the run */ }
  if (isFile) throw new StudioError('USAGE', `${option} ${out} is a file; pass a folder (each run is written into <folder>/<run id>/).`);
  return dir;
}
