import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { runsFolder, TRACE_FILE } from '../../src/core/trace/format/discover';
import { sampleImagineRun, sampleShadowRun } from './samples';

/** Run ids of the sample workspace. */
export const SAMPLE_RUN_IDS = {
  shadow: '20261129-120000-shadow-sample',
  imagine: '20261129-113000-imagine-sample',
  /** A copy of the shadow run whose last line (its run.end) was cut mid-write, as a crash leaves it. */
  torn: '20261129-130000-shadow-crashed',
} as const;

/** Bytes of the torn run's last line that made it to disk. */
export const TORN_LINE_BYTES = 25;

/** The trace file of a run in a workspace. */
export function sampleTraceFile(workspace: string, runId: string): string {
  return path.join(runsFolder(workspace), runId, TRACE_FILE);
}

/**
 * Writes the sample runs into `<workspace>/.rehearsal/runs/` through the real writer, and with
 * `torn` a copy of the shadow run whose last line was cut mid-write. Returns the trace files.
 */
export async function writeSampleWorkspace(
  workspace: string,
  options: { torn?: boolean } = {},
): Promise<string[]> {
  const files: string[] = [];
  for (const t of [
    sampleShadowRun(SAMPLE_RUN_IDS.shadow),
    sampleImagineRun(SAMPLE_RUN_IDS.imagine),
  ]) {
    const file = sampleTraceFile(workspace, t.runId);
    await fs.rm(path.dirname(file), { recursive: true, force: true });
    await t.write(file);
    files.push(file);
  }
  if (options.torn) {
    const file = sampleTraceFile(workspace, SAMPLE_RUN_IDS.torn);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, tornShadowRunText(SAMPLE_RUN_IDS.torn));
    files.push(file);
  }
  return files;
}

/** The sample shadow run as a crash leaves it: its last line (the run.end) cut mid-write. */
export function tornShadowRunText(runId: string): string {
  const text = sampleShadowRun(runId).text();
  const lastLineStart = text.lastIndexOf('\n', text.length - 2) + 1;
  return text.slice(0, lastLineStart) + text.slice(lastLineStart, lastLineStart + TORN_LINE_BYTES);
}
