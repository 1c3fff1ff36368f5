import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import { importChatText } from '../../core/tasks/import/chat';
import { importEnvaceText } from '../../core/tasks/import/envace';
import type { ImportResult } from '../../core/tasks/import/types';
import { writeImport } from '../../core/tasks/import/writeImport';
import type { CliIO } from '../io';
import { EXIT } from '../io';

/** The formats `rehearse import` reads. */
export type ImportFormat = 'envace' | 'chat';

/**
 * `rehearse import envace|chat <file> --out <dir>`: tasks, replay recordings and few-shot pairs from
 * recorded data. Bad records are reported on stderr (`record <i>: <reason>`) and skipped; the exit
 * code is 1 only when nothing could be imported.
 */
export async function importCommand(format: ImportFormat, file: string, options: { out?: string }, io: CliIO): Promise<number> {
  if (!options.out) throw new StudioError('USAGE', 'Missing --out <dir>: where to write tasks/, recordings/ and examples.jsonl.');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new StudioError('IMPORT_UNREADABLE', `Cannot read ${file}: ${(err as Error).message}.`);
  }
  const name = path.basename(file);
  const result: ImportResult = format === 'envace' ? importEnvaceText(text, name) : importChatText(text, name);
  const written = await writeImport(result, options.out);
  for (const s of written.skipped) io.err(s.index < 0 ? `rehearse: ${file}: ${s.reason}` : `${format === 'chat' ? 'line' : 'record'} ${s.index}: skipped: ${s.reason}`);
  io.out(`imported ${written.taskFiles.length} task(s) into ${options.out} (${written.skipped.length} skipped, ${written.examples} few-shot pair(s) in ${path.relative(options.out, written.examplesFile)})`);
  return written.taskFiles.length > 0 ? EXIT.ok : EXIT.failure;
}
