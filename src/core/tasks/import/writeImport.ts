import * as path from 'node:path';
import { mkdirInside, writeFileInside, writeRootOf } from '../../base/writePath';
import type { RecordedExample } from '../../protocol/types';
import { validateReplayRecording } from '../../env/replayRecording';
import { TASK_FILE_SUFFIX, parseTask } from '../format/loader';
import type { ImportResult, SkippedRecord } from './types';

/** Few-shot pairs a task gets from the other imported records: up to this many per tool. */
export const EXAMPLES_PER_TOOL = 2;
/** And at most this many in all. */
export const MAX_EXAMPLES_PER_TASK = 8;

/** Task and recording files written at once. */
const FILES_AT_ONCE = 32;

/** What was written. */
export interface WrittenImport {
  taskFiles: string[];
  recordingFiles: string[];
  examplesFile: string;
  examples: number;
  skipped: SkippedRecord[];
}

/**
 * Where a task's `examples` come from: `others` (pairs of its tools from the other records, never
 * its own answers) or `own` (every call of its own recorded conversation, in order: the few-shot
 * EnvACE's simulator sees, for the envace rehearse prompt profile).
 */
export type ImportExamples = 'others' | 'own';

/**
 * Writes an import: `tasks/<id>.task.json`, `recordings/<id>.replay.json` and `examples.jsonl` (every
 * recorded call as a few-shot pair). Each task's `examples` are taken as `examples` says. Every
 * written task and recording is checked against its schema first; one that fails is reported as
 * skipped instead.
 */
export async function writeImport(
  result: ImportResult,
  outDir: string,
  examplesFrom: ImportExamples = 'others',
): Promise<WrittenImport> {
  const tasksDir = path.join(outDir, 'tasks');
  const recordingsDir = path.join(outDir, 'recordings');
  const root = writeRootOf(outDir);
  await mkdirInside(root, tasksDir);
  await mkdirInside(root, recordingsDir);
  const written: WrittenImport = {
    taskFiles: [],
    recordingFiles: [],
    examplesFile: path.join(outDir, 'examples.jsonl'),
    examples: 0,
    skipped: result.skipped.slice(),
  };
  const lines: string[] = [];
  for (const t of result.tasks) {
    for (const p of t.pairs) lines.push(JSON.stringify({ task: t.task.id, ...p }));
  }
  const files: [string, string][] = [];
  for (const t of result.tasks) {
    const examples =
      examplesFrom === 'own' ? t.pairs : fewShotFor(t.task.tools ?? [], result, t.index);
    const task = examples.length ? { ...t.task, examples } : t.task;
    try {
      parseTask(task, `record ${t.index}`);
      validateReplayRecording(t.recording, `record ${t.index}`);
    } catch (err) {
      written.skipped.push({ index: t.index, reason: (err as Error).message });
      continue;
    }
    const taskFile = path.join(tasksDir, `${task.id}${TASK_FILE_SUFFIX}`);
    const recordingFile = path.join(recordingsDir, `${task.id}.replay.json`);
    files.push([recordingFile, JSON.stringify(t.recording, null, 2) + '\n']);
    files.push([taskFile, JSON.stringify(task, null, 2) + '\n']);
    written.taskFiles.push(taskFile);
    written.recordingFiles.push(recordingFile);
  }
  // A few files at once: thousands of tasks are written in seconds, not one wait after another.
  for (let i = 0; i < files.length; i += FILES_AT_ONCE)
    await Promise.all(
      files.slice(i, i + FILES_AT_ONCE).map(([file, text]) => writeFileInside(root, file, text)),
    );
  await writeFileInside(root, written.examplesFile, lines.length ? lines.join('\n') + '\n' : '');
  written.examples = lines.length;
  written.skipped.sort((a, b) => a.index - b.index);
  return written;
}

function fewShotFor(
  tools: readonly string[],
  result: ImportResult,
  ownIndex: number,
): RecordedExample[] {
  const out: RecordedExample[] = [];
  for (const tool of tools) {
    let n = 0;
    // Stops at the limits: an import of thousands of records would otherwise read every pair of
    // every record for every task.
    for (const other of result.tasks) {
      if (n >= EXAMPLES_PER_TOOL || out.length >= MAX_EXAMPLES_PER_TASK) break;
      if (other.index === ownIndex) continue;
      for (const p of other.pairs) {
        if (n >= EXAMPLES_PER_TOOL || out.length >= MAX_EXAMPLES_PER_TASK) break;
        if (p.tool !== tool) continue;
        out.push(p);
        n++;
      }
    }
  }
  return out;
}
