import { readdir, stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { JsonValue } from '../../base/json';
import { isJsonObject, MAX_JSON_DEPTH, nestsDeeperThan } from '../../base/json';
import { StudioError } from '../../base/errors';
import type { SkippedLine } from '../../trace/format/reader';
import { keepSkipped } from '../../trace/format/reader';
import { readLines } from '../../trace/format/lineReader';

/*
 * What EnvACE (commit 173e941) writes to `trainer.rollout_data_dir`, read from its code:
 * - `verl/trainer/ppo/ray_trainer.py:1413-1436`: after every training step (when the option is
 *   set; `examples/drmas_trainer/run_checklist_share.sh:224` sets it to `.../rollout_dumps`), every
 *   row of the step's batch is decoded with `skip_special_tokens=True`: `prompts` → `input`,
 *   `responses` → `output`; `score` is `token_level_scores.sum(-1)`.
 * - `verl/trainer/ppo/ray_trainer.py:699-721` (`_dump_generations`): one file `<global_steps>.jsonl`
 *   per step, one `json.dumps(entry, ensure_ascii=False)` line per row with `input`, `output`,
 *   `score`, `step`, plus each `reward_extra_info` list as long as the batch. The checklist reward
 *   manager (`agent_system/reward_manager/checklist.py:85-91`) adds `max_num_turns` and
 *   `num_checklists`; its score is `episode_rewards / num_checklists / max_num_turns`
 *   (`checklist.py:53`), the same on every row of a trajectory.
 * - No agent id, uid, trajectory id or turn index is written: the rows of a step are the Tool
 *   Caller Agent's turns (its whole conversation rendered by the chat template,
 *   `agent_system/agent/agents/checklist/tool_caller_agent.py:59-65`) and the Tool Simulator
 *   Agent's firings (`tool_simulator_agent.py:225-262`, prompt from
 *   `simulate_core/_builders.py:147-212`), in the order `_balance_batch` left them, with rows that
 *   `adjust_batch` copied to pad the batch (`agent_system/multi_turn_rollout/utils.py:300-314`).
 */

/** Largest rollout file read: every row of a step is held to rebuild its episodes. */
export const MAX_ROLLOUT_FILE_BYTES = 256 * 2 ** 20;
/** Longest line kept; a longer one is skipped and counted. */
export const MAX_ROLLOUT_LINE_BYTES = 64 * 2 ** 20;
/** Most rollout files one import reads (one per training step). */
export const MAX_ROLLOUT_FILES = 10_000;

/** One row of a rollout file. */
export interface RolloutRow {
  /** 1-based line number in its file. */
  line: number;
  input: string;
  output: string;
  /** EnvACE's score of the row; null when absent or not a finite number. */
  score: number | null;
  /** The training step the row says it belongs to. */
  step: number | null;
  /** `num_checklists` and `max_num_turns`, when written. */
  numChecklists: number | null;
  maxNumTurns: number | null;
}

/** The rows of one rollout file, with the lines that could not be read. */
export interface RolloutFile {
  file: string;
  rows: RolloutRow[];
  skipped: SkippedLine[];
  skippedCount: number;
}

/** A rollout file of a folder: its path and the step its name gives (`12.jsonl` → 12). */
export interface RolloutFileEntry {
  file: string;
  step: number | null;
}

/**
 * The `*.jsonl` files of a rollout folder, by step (names that are numbers first, in numeric order).
 * Throws a coded error when the folder cannot be read, holds no such file, or too many.
 */
export async function listRolloutFiles(dir: string): Promise<RolloutFileEntry[]> {
  let names: string[];
  try {
    if (!(await stat(dir)).isDirectory())
      throw new StudioError(
        'ROLLOUTS_NOT_A_FOLDER',
        `${dir} is not a folder; pass the folder EnvACE's trainer.rollout_data_dir names.`,
      );
    names = await readdir(dir);
  } catch (err) {
    if (err instanceof StudioError) throw err;
    throw new StudioError(
      'ROLLOUTS_UNREADABLE',
      `Cannot read ${dir}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (err as Error).message}.`,
    );
  }
  const entries = names
    .filter((n) => n.endsWith('.jsonl'))
    .map((n) => ({
      file: path.join(dir, n),
      step: /^\d+\.jsonl$/.test(n) ? Number(n.slice(0, -6)) : null,
    }));
  if (entries.length === 0)
    throw new StudioError(
      'ROLLOUTS_EMPTY',
      `${dir} holds no rollout files: EnvACE writes one <step>.jsonl per training step into trainer.rollout_data_dir; pass that folder.`,
    );
  if (entries.length > MAX_ROLLOUT_FILES)
    throw new StudioError(
      'ROLLOUTS_TOO_MANY',
      `${dir} holds ${entries.length} rollout files; one import reads at most ${MAX_ROLLOUT_FILES}: move some into another folder and import each.`,
    );
  return entries.sort(
    (a, b) => (a.step ?? Infinity) - (b.step ?? Infinity) || a.file.localeCompare(b.file),
  );
}

/** Reads one rollout file; lines that are not a row are skipped and counted, never fatal. */
export async function readRolloutFile(file: string): Promise<RolloutFile> {
  const size = (await stat(file)).size;
  if (size > MAX_ROLLOUT_FILE_BYTES)
    throw new StudioError(
      'ROLLOUT_FILE_TOO_LARGE',
      `${file} is ${(size / 2 ** 20).toFixed(0)} MiB; a rollout file is read up to ${MAX_ROLLOUT_FILE_BYTES / 2 ** 20} MiB: split it by lines and import the parts.`,
    );
  const result: RolloutFile = { file, rows: [], skipped: [], skippedCount: 0 };
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  for await (const raw of readLines(file, { maxLineBytes: MAX_ROLLOUT_LINE_BYTES })) {
    const decoded = raw.oversized
      ? `line too long (${raw.length} bytes, at most ${MAX_ROLLOUT_LINE_BYTES})`
      : decodeRow(raw.bytes, raw.line, utf8);
    if (typeof decoded === 'string') {
      result.skippedCount++;
      keepSkipped(result.skipped, { line: raw.line, offset: raw.offset, reason: decoded });
    } else if (decoded) {
      result.rows.push(decoded);
    }
  }
  return result;
}

/** A number field of a row as Python writes one that is not finite. */
const NON_FINITE_NUMBER =
  /("(?:score|step|num_checklists|max_num_turns)": )-?(?:NaN|Infinity)(?=[,}])/g;

/** A row, undefined for a blank line, or why the line is not a row. */
function decodeRow(
  bytes: Uint8Array,
  line: number,
  utf8: TextDecoder,
): RolloutRow | undefined | string {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return 'invalid UTF-8';
  }
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Python's json.dumps writes a score that is not finite as NaN or Infinity, which JSON refuses.
    const numbersFixed = text.replace(NON_FINITE_NUMBER, '$1null');
    try {
      value = numbersFixed === text ? undefined : JSON.parse(numbersFixed);
    } catch {
      value = undefined;
    }
    if (value === undefined) return 'not valid JSON';
  }
  if (!isJsonObject(value)) return 'not a JSON object';
  if (nestsDeeperThan(value)) return `nested deeper than ${MAX_JSON_DEPTH} levels`;
  if (typeof value['input'] !== 'string' || typeof value['output'] !== 'string')
    return 'no "input" and "output" strings (not a row of EnvACE\'s _dump_generations)';
  return {
    line,
    input: value['input'],
    output: value['output'],
    score: finite(value['score']),
    step: finite(value['step']),
    numChecklists: finite(value['num_checklists']),
    maxNumTurns: finite(value['max_num_turns']),
  };
}

function finite(v: JsonValue | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
