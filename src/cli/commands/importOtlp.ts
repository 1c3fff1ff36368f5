import * as path from 'node:path';
import { counted } from '../../core/base/counted';
import { writeOtlpImport } from '../../core/otlp/otlpLive';
import { emptyOtlpData, readOtlpJson } from '../../core/otlp/otlpJson';
import { readOtlpProtobuf } from '../../core/otlp/otlpProto';
import { writeOtlpRunTrace } from '../../core/otlp/otlpRunTrace';
import { STUDIO_FOLDER } from '../../core/trace/format/discover';
import type { CliIO } from '../io';
import { EXIT } from '../io';
import { outFolderArg } from '../outArg';
import { readImportBytes, readImportFile } from './import';

/** Notes (what a trace held only elsewhere, or not at all) printed one by one; the rest counted. */
const NOTES_SHOWN = 50;

/** File names of OTLP protobuf: the rest is read as OTLP JSON. */
const PROTOBUF_FILE = /\.(pb|binpb|protobuf)$/i;

/**
 * `rehearse import otlp <file...> [--out <dir>]`: OTLP JSON trace and log files (GenAI spans and
 * events) as one episode per OTLP trace: a run trace in `<out>/runs/` that `rehearse replay`
 * rehearses, and tasks/, recordings/ and examples.jsonl as `import chat` writes them. What cannot
 * be read is reported on stderr with its code, file, line and span, and the rest imported; exit 1
 * only when no episode was.
 */
export async function importOtlpCommand(
  files: string[],
  options: { out?: string },
  io: CliIO,
): Promise<number> {
  const out = outFolderArg(
    options.out ??
      path.join(
        STUDIO_FOLDER,
        'imports',
        path.basename(files[0] ?? 'otlp').replace(/\.[^.]*$/, '') || 'otlp',
      ),
    '--out',
    'runs/, tasks/, recordings/ and examples.jsonl go into it',
  );
  const data = emptyOtlpData();
  for (const file of files) {
    if (PROTOBUF_FILE.test(file)) readOtlpProtobuf(await readImportBytes(file), file, data);
    else readOtlpJson(await readImportFile(file), file, data);
  }
  const { faults, written, episodes } = await writeOtlpImport(data, out, (l) => io.err(l));
  if (!episodes.length) {
    io.out(`imported no episode from ${counted(files.length, 'file')}`);
    return EXIT.failure;
  }
  const trace = await writeOtlpRunTrace(episodes, path.join(out, 'runs'), files);
  const notes = [
    ...episodes.flatMap((e) => e.episode.notes.map((n) => `trace ${e.episode.traceId}: ${n}`)),
    ...trace.notes,
  ];
  for (const note of notes.slice(0, NOTES_SHOWN)) io.err(note);
  if (notes.length > NOTES_SHOWN)
    io.err(`... and ${notes.length - NOTES_SHOWN} more notes like these`);
  const calls = episodes.reduce(
    (n, e) => n + e.episode.turns.reduce((k, t) => k + t.calls.length, 0),
    0,
  );
  io.out(
    `imported ${counted(episodes.length, 'episode')} (${counted(calls, 'call')}) into ${out}: trace ${trace.traceFile}, ${counted(written.taskFiles.length, 'task')}, ${counted(faults.length, 'fault')}`,
  );
  return EXIT.ok;
}
