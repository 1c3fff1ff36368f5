import * as path from 'node:path';
import { counted } from '../base/counted';
import { TASK_FILE_SUFFIX } from '../tasks/format/loader';
import { writeImport } from '../tasks/import/writeImport';
import type { OtlpFault } from './codes';
import { importOtlpData } from './otlpImport';
import type { OtlpData } from './otlpJson';
import { writeOtlpRunTrace } from './otlpRunTrace';

/** Faults shown one by one; the rest are counted by code. */
const FAULTS_SHOWN = 20;

/** Where a receiver's lines go: one per trace written, and faults and notes. */
export interface OtlpLiveLog {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Fault lines as `import otlp` prints them: the first ones by one, the rest counted by code. */
export function otlpFaultLines(faults: readonly OtlpFault[]): string[] {
  const lines = faults
    .slice(0, FAULTS_SHOWN)
    .map(
      (f) =>
        `${f.file ? `${f.file}:${f.line}: ` : ''}${f.spanId ? `span ${f.spanId}: ` : ''}${f.code}: ${f.message}`,
    );
  if (faults.length > FAULTS_SHOWN) {
    const byCode = new Map<string, number>();
    for (const f of faults.slice(FAULTS_SHOWN)) byCode.set(f.code, (byCode.get(f.code) ?? 0) + 1);
    lines.push(
      `... and ${faults.length - FAULTS_SHOWN} more: ${[...byCode].map(([c, n]) => `${c} × ${n}`).join(', ')}`,
    );
  }
  return lines;
}

/**
 * OTLP data imported as `rehearse import otlp` imports it: tasks, recordings and examples written
 * into `out` (`writeImport`, as `import chat` writes them), traces skipped there and faults reported
 * on `err`; the episodes whose task was written.
 */
export async function writeOtlpImport(data: OtlpData, out: string, err: (line: string) => void) {
  const imported = importOtlpData(data);
  const written = await writeImport(imported.result, out);
  const writtenIds = new Set(written.taskFiles.map((f) => path.basename(f, TASK_FILE_SUFFIX)));
  const episodes = imported.episodes.filter((e) => writtenIds.has(e.imported.task.id));
  for (const s of written.skipped) err(`rehearse: trace ${s.index + 1}: skipped: ${s.reason}`);
  for (const line of otlpFaultLines(imported.faults)) err(line);
  return { faults: imported.faults, written, episodes };
}

/**
 * One batch of complete traces a receiver took (`rehearse collect`, the editor's receiver),
 * imported as `rehearse import otlp` imports a file: tasks and recordings into `out`, one run into
 * `runs`; a line per trace written, `<id>: <n> calls (<service>) → <run trace>`.
 */
export async function writeCollectedTraces(
  data: OtlpData,
  out: string,
  runs: string,
  log: OtlpLiveLog,
): Promise<void> {
  const { episodes } = await writeOtlpImport(data, out, log.err);
  if (!episodes.length) return;
  const trace = await writeOtlpRunTrace(episodes, runs, ['otlp-live']);
  for (const note of trace.notes) log.err(note);
  for (const { episode } of episodes)
    log.out(
      `trace ${episode.traceId}: ${counted(
        episode.turns.reduce((k, t) => k + t.calls.length, 0),
        'call',
      )} (${episode.service ?? 'otlp'}) → ${trace.traceFile}`,
    );
}
