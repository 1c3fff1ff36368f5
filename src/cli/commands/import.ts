import { readFile, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import { importChatText } from '../../core/tasks/import/chat';
import { envaceErrorCounts, importEnvaceText } from '../../core/tasks/import/envace';
import type { ImportResult } from '../../core/tasks/import/types';
import { writeImport } from '../../core/tasks/import/writeImport';
import { counted } from '../../core/base/counted';
import { STUDIO_FOLDER } from '../../core/trace/format/discover';
import type { CliIO } from '../io';
import { outFolderArg } from '../outArg';
import { EXIT } from '../io';

/** The formats `rehearse import` reads. */
export type ImportFormat = 'envace' | 'chat';

/** The largest file `rehearse import` reads (it parses the whole file). */
export const MAX_IMPORT_BYTES = 256 * 2 ** 20;

/** A file to import as text, refused with a coded error when it is too large or cannot be read. */
export async function readImportFile(file: string): Promise<string> {
  return (await readImportBytes(file)).toString('utf8');
}

/** {@link readImportFile}'s bytes: a binary import file (OTLP protobuf), with the same bound. */
export async function readImportBytes(file: string): Promise<Buffer> {
  try {
    const size = (await stat(file)).size;
    if (size > MAX_IMPORT_BYTES)
      throw new StudioError(
        'IMPORT_TOO_LARGE',
        `${file} is ${(size / 2 ** 20).toFixed(0)} MiB; imports are limited to ${MAX_IMPORT_BYTES / 2 ** 20} MiB: split the file and import the parts.`,
      );
    return await readFile(file);
  } catch (err) {
    if (err instanceof StudioError) throw err;
    throw new StudioError('IMPORT_UNREADABLE', `Cannot read ${file}: ${(err as Error).message}.`);
  }
}

/**
 * `rehearse import envace|chat <file> [--out <dir>] [--own-examples]`: tasks, replay recordings and
 * few-shot pairs from recorded data, by default into `.rehearsal/imports/<file name>`. Bad records are reported on stderr (`record <i>: <reason>`) and skipped; the exit
 * code is 1 only when nothing could be imported.
 */
export async function importCommand(
  format: ImportFormat,
  file: string,
  options: { out?: string; ownExamples?: boolean },
  io: CliIO,
): Promise<number> {
  const out = outFolderArg(
    options.out ??
      path.join(STUDIO_FOLDER, 'imports', path.basename(file).replace(/\.[^.]*$/, '') || 'import'),
    '--out',
    'tasks/, recordings/ and examples.jsonl go into it',
  );
  const text = await readImportFile(file);
  const name = path.basename(file);
  const result: ImportResult =
    format === 'envace' ? importEnvaceText(text, name) : importChatText(text, name);
  const written = await writeImport(result, out, options.ownExamples ? 'own' : 'others');
  for (const s of written.skipped)
    io.err(
      s.index < 0
        ? `rehearse: ${file}: ${s.reason}`
        : `${format === 'chat' ? 'line' : 'record'} ${s.index}: skipped: ${s.reason}`,
    );
  io.out(
    `imported ${counted(written.taskFiles.length, 'task')} into ${out} (${written.skipped.length} skipped, ${counted(written.examples, 'few-shot pair')} in ${path.relative(out, written.examplesFile)})`,
  );
  const codes =
    format === 'envace'
      ? [...envaceErrorCounts(result)].sort(([a], [b]) => a.localeCompare(b))
      : [];
  if (codes.length)
    io.out(
      `kept EnvACE tool errors verbatim: ${codes.map(([code, n]) => `${code} × ${n}`).join(', ')}`,
    );
  return written.taskFiles.length > 0 ? EXIT.ok : EXIT.failure;
}
