import * as path from 'node:path';
import { counted } from '../../core/base/counted';
import { writeFileInside, writeRootOf } from '../../core/base/writePath';
import { runAsOtlpJson } from '../../core/otlp/otlpExport';
import { resolveTraceArgument } from '../../core/trace/format/discover';
import { readTraceEvents } from '../../core/trace/format/reader';
import type { CliIO } from '../io';
import { EXIT } from '../io';

/**
 * `rehearse export <trace...> --format otlp --out <file>`: the runs as OTLP JSON, one
 * ExportTraceServiceRequest per line and one OTLP trace per episode, in the GenAI conventions
 * (`runAsOtlpJson`). `rehearse import otlp` reads the file back into the same episodes.
 */
export async function exportOtlpCommand(traces: string[], out: string, io: CliIO): Promise<number> {
  const files = (await Promise.all(traces.map(resolveTraceArgument))).flat();
  let text = '';
  let episodes = 0;
  for (const file of files) {
    const { events } = await readTraceEvents(file);
    const lines = runAsOtlpJson(events);
    episodes += lines ? lines.trimEnd().split('\n').length : 0;
    text += lines;
  }
  await writeFileInside(writeRootOf(path.dirname(out)), out, text);
  io.out(
    `wrote ${counted(episodes, 'episode')} of ${counted(files.length, 'run')} as OTLP JSON to ${out}`,
  );
  return EXIT.ok;
}
