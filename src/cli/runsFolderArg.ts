import * as path from 'node:path';
import { runsFolder } from '../core/trace/format/discover';
import { outFolderArg } from './outArg';

/**
 * The runs folder a command writes into: `--out` (created when missing) or `.rehearsal/runs` of the
 * current folder. An `--out` that is a file (or under one) is a usage error before anything starts.
 */
export function runsFolderArg(out: string | undefined, option = '--out'): string {
  if (out === undefined) return runsFolder(process.cwd());
  return path.resolve(outFolderArg(out, option, 'each run is written into <folder>/<run id>/'));
}
