import { readFile } from 'node:fs/promises';
import { schemaCheck } from '../base/jsonSchema';
import replaySchema from '../../../schemas/replay.schema.json';
import { StudioError } from '../base/errors';
import type { JsonValue } from '../base/json';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../base/json';
import type { ToolResultContent } from '../fidelity/responseValue';
import type { ToolDefinition } from '../protocol/types';

/** One recorded call with the answer the real tool gave. */
export interface RecordedCall {
  tool: string;
  arguments: JsonValue;
  response: ToolResultContent;
}

/** A replay recording (`schemas/replay.schema.json`): the tools, and the recorded answers. */
export interface ReplayRecording {
  version: 1;
  /** Where it was recorded (file and record index). */
  source?: string;
  tools: ToolDefinition[];
  calls: RecordedCall[];
}

const checkRecording = schemaCheck(replaySchema);

/** Checks a value against the replay schema; faults name the JSON path. */
export function validateReplayRecording(value: unknown, where: string): ReplayRecording {
  if (nestsDeeperThan(value, MAX_JSON_DEPTH + 8)) {
    throw new StudioError(
      'REPLAY_INVALID',
      `${where}: its recorded values nest deeper than ${MAX_JSON_DEPTH} levels. Fix the recording (schemas/replay.schema.json).`,
      { path: '/' },
    );
  }
  const checked = checkRecording(value);
  if (checked.ok) return value as ReplayRecording;
  const e = checked.errors[0];
  const at = e?.instancePath || '/';
  throw new StudioError(
    'REPLAY_INVALID',
    `${where}: ${at} ${e?.message ?? 'is invalid'}. Fix the recording (schemas/replay.schema.json).`,
    { path: at },
  );
}

/** Reads and validates a replay recording file. */
export async function readReplayRecording(file: string): Promise<ReplayRecording> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new StudioError(
      'REPLAY_INVALID',
      `Cannot read the replay recording ${file}: ${(err as Error).message}.`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new StudioError(
      'REPLAY_INVALID',
      `${file} is not valid JSON (${(err as Error).message}).`,
    );
  }
  return validateReplayRecording(value, file);
}
