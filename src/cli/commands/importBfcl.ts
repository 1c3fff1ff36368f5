import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import { resolveTrainerPython } from '../../core/training/pythonEnv';
import { STUDIO_FOLDER } from '../../core/trace/format/discover';
import type { CliIO } from '../io';
import { EXIT } from '../io';
import { outFolderArg } from '../outArg';
import { runPythonImporter } from '../pythonImporter';

/** The multi-turn categories of BFCL-v4 (trainer/bfcl/backend.py CATEGORIES). */
export const BFCL_CATEGORIES = ['base', 'miss_param', 'miss_func', 'long_context'] as const;

/** Options of `rehearse import bfcl`. */
export interface ImportBfclArgs {
  out?: string;
  answers?: string;
  limit?: string;
  python?: string;
  /** A bfcl_eval package folder to use instead of the installed one. */
  backend?: string;
}

/**
 * `rehearse import bfcl <records file | category>`: BFCL-v4 multi-turn records as tasks, written by
 * `python -m trainer.bfcl.importer` in the studio's Python environment (which holds bfcl-eval), by
 * default into `.rehearsal/imports/bfcl-<category or file name>/tasks`. Skipped records are said on
 * stderr; exit 1 when nothing was imported.
 */
export async function importBfclCommand(
  source: string,
  args: ImportBfclArgs,
  io: CliIO,
): Promise<number> {
  const category = (BFCL_CATEGORIES as readonly string[]).includes(source);
  if (!category && !existsSync(source))
    throw new StudioError(
      'USAGE',
      `${source} is neither a records file nor a multi-turn category (${BFCL_CATEGORIES.join(', ')}).`,
    );
  if (args.limit !== undefined && !/^[1-9]\d{0,5}$/.test(args.limit))
    throw new StudioError(
      'USAGE',
      `--limit takes a count of records (1 or more), not "${args.limit}".`,
    );
  if (args.answers !== undefined && !existsSync(args.answers))
    throw new StudioError('USAGE', `--answers ${args.answers} does not exist.`);
  if (args.backend !== undefined && !existsSync(args.backend))
    throw new StudioError('USAGE', `--backend ${args.backend} does not exist.`);
  const name = category ? source : path.basename(source).replace(/\.[^.]*$/, '') || 'records';
  const out = path.resolve(
    outFolderArg(
      args.out ?? path.join(STUDIO_FOLDER, 'imports', `bfcl-${name}`),
      '--out',
      'the folder the tasks/ go into',
    ),
  );
  const { python } = resolveTrainerPython({ option: args.python });
  const argv = [
    '-m',
    'trainer.bfcl.importer',
    category ? source : path.resolve(source),
    '--out',
    out,
    ...(args.answers ? ['--answers', path.resolve(args.answers)] : []),
    ...(args.limit ? ['--limit', args.limit] : []),
    ...(args.backend ? ['--backend', path.resolve(args.backend)] : []),
  ];
  const { code, summary } = await runPythonImporter(python, argv, io);
  if (code === 2 || summary.tasks === undefined) return code === 2 ? EXIT.usage : EXIT.failure;
  io.out(
    `wrote ${summary.tasks} task(s) to ${summary.out}${summary.skipped ? ` (${summary.skipped} record(s) skipped)` : ''}; \`rehearse verify ${summary.out}\` plays their ground truth`,
  );
  return summary.tasks > 0 ? EXIT.ok : EXIT.failure;
}
