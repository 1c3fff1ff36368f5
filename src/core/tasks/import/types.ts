import type { RecordedCall, ReplayRecording } from '../../env/replayRecording';
import type { RecordedExample } from '../../protocol/types';
import type { TaskFile } from '../format/taskFile';

/** A record that was not imported: its index in the input (0-based) and why. */
export interface SkippedRecord {
  index: number;
  reason: string;
}

/** One imported conversation: the task, its replay recording, and its recorded call pairs. */
export interface ImportedTask {
  /** Index of the record in the input. */
  index: number;
  task: TaskFile;
  recording: ReplayRecording;
  /** The record's calls with their results, as few-shot pairs. */
  pairs: RecordedExample[];
}

/** What an importer made of a file. */
export interface ImportResult {
  tasks: ImportedTask[];
  skipped: SkippedRecord[];
}

/** A recorded call ready for a replay recording. */
export type { RecordedCall };
