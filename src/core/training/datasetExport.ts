import * as path from 'node:path';
import { counted } from '../base/counted';
import { StudioError } from '../base/errors';
import { mkdirInside, writeFileInside, writeRootOf } from '../base/writePath';
import type { RehearsePromptOptions } from '../protocol/rehearsePrompt';
import { parseRehearsePromptOptions } from '../protocol/rehearsePrompt';
import { loadTasks } from '../tasks/format/loader';
import type { TaskFile } from '../tasks/format/taskFile';
import { resolveTraceArgument } from '../trace/format/discover';
import type { DatasetRow } from './datasetRow';
import type { EnvaceRecord } from './envaceExport';
import { exportEnvace } from './envaceExport';
import { exportRows, readMemories } from './exportRows';
import { readMemoryFile } from './memoryFile';
import { splitFileNames, splitTasks } from './taskSplit';
import { requireNumber } from '../base/numbers';
import { OUTSIDE_NUMBERS } from '../base/outsideNumbers';

/**
 * The options of an export, as `rehearse export` takes them (the editor's Export Training Rows
 * gives the same): `out` is checked by the caller (a file the user named).
 */
export interface ExportArgs {
  out?: string;
  format?: string;
  source?: string;
  onlySuccessful?: boolean;
  roles?: string;
  actualRehearsals?: boolean;
  policyRehearsals?: boolean;
  tasks?: string[];
  rehearsePrompt?: string;
  group?: string;
  actRows?: string;
  runs?: string;
  tools?: string;
  onlyMismatches?: boolean;
  splitByTask?: string;
  seed?: string;
  json?: boolean;
  /** False with --no-annotations. */
  annotations?: boolean;
  identifierSlots?: boolean;
  memoryFrom?: string[];
  /** A JSONL file of `{"task", "memory"}` lines: memories a recipe made (`readMemoryFile`). */
  memoryFile?: string;
}

const list = (value: string | undefined) =>
  value === undefined
    ? undefined
    : new Set(
        value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      );

/** What was written where, by split. */
export interface Written {
  file: string;
  items: number;
  tasks: string[];
}

/** What an export wrote, and its summary for people (`summaryText`) and for --json. */
export interface DatasetExport {
  summaryText: string;
  summaryJson: Record<string, unknown>;
  written: Written[];
  format: 'rows' | 'envace' | 'trl';
  heldOutFraction: number | undefined;
  seed: number;
}

/**
 * Training rows for the trainer from recorded runs (`format` rows), or EnvACE's tool dataset JSON
 * (`format` envace), written to `out` or split by task into its train and held-out files: the one
 * road of `rehearse export` and of the editor's Export Training Rows.
 */
export async function exportDataset(
  traces: string[],
  args: ExportArgs,
  /** `--format trl`: writes the rows (JSONL text) as TRL's parquet (the trainer's `export-trl`). */
  writeTrl?: (file: string, jsonl: string) => Promise<void>,
): Promise<DatasetExport> {
  const settings = exportSettings(args);
  if (settings.format === 'trl' && !writeTrl)
    throw new StudioError(
      'USAGE',
      '--format trl is written by the trainer: use `rehearse export`.',
    );
  const { out, format, heldOutFraction, seed } = settings;
  const runs = list(args.runs);
  const files = (await Promise.all(traces.map(resolveTraceArgument))).flat();
  const taskFiles = args.tasks?.length
    ? new Map((await loadTasks(args.tasks)).map((t) => [t.task.id, t.task]))
    : undefined;
  // The folder --out names is the root: its own path may pass links, the files in it may not be links.
  await mkdirInside(writeRootOf(path.dirname(path.resolve(out))), path.dirname(path.resolve(out)));

  // Items are kept until the split is known (the held-out tasks depend on every task exported).
  const items: ExportItem[] = [];
  const { summaryText, summaryJson } =
    format === 'envace'
      ? await collectEnvace(files, args, runs, taskFiles, items)
      : await collectRows(files, args, settings, runs, taskFiles, items);
  const written = await writeItems(items, settings, writeTrl);
  return { summaryText, summaryJson, written, format, heldOutFraction, seed };
}

/** The export's options, checked in the order the user reads them. */
interface ExportSettings {
  out: string;
  format: 'rows' | 'envace' | 'trl';
  source: 'demonstration' | 'rollout';
  roles: string[];
  rehearsePrompt: RehearsePromptOptions | undefined;
  actRows: 'turn' | 'episode';
  heldOutFraction: number | undefined;
  seed: number;
}

/** Checks the command line's options (a usage error on the first wrong one) and reads their values. */
function exportSettings(args: ExportArgs): ExportSettings {
  if (!args.out)
    throw new StudioError(
      'USAGE',
      'Missing --out <file>: where to write the rows (JSONL) or, with --format envace, the tool dataset (JSON).',
    );
  const format = args.format ?? 'rows';
  if (format !== 'rows' && format !== 'envace' && format !== 'trl')
    throw new StudioError('USAGE', `--format must be rows, envace or trl, not "${format}".`);
  const source = args.source ?? 'demonstration';
  if (source !== 'demonstration' && source !== 'rollout')
    throw new StudioError('USAGE', `--source must be demonstration or rollout, not "${source}".`);
  const roles = (args.roles ?? 'act,rehearse').split(',').map((r) => r.trim());
  for (const r of roles)
    if (r !== 'act' && r !== 'rehearse')
      throw new StudioError('USAGE', `--roles takes act and/or rehearse, not "${r}".`);
  let rehearsePrompt: RehearsePromptOptions | undefined;
  if (args.rehearsePrompt) {
    let value: unknown;
    try {
      value = JSON.parse(args.rehearsePrompt);
    } catch {
      throw new StudioError(
        'USAGE',
        '--rehearse-prompt must be a JSON object, e.g. \'{"includeTools": false}\' or \'{"profile": "compact"}\'.',
      );
    }
    const parsed = parseRehearsePromptOptions(value);
    if (!parsed.ok) throw new StudioError('USAGE', `--rehearse-prompt: ${parsed.message}.`);
    rehearsePrompt = parsed.options;
  }
  const actRows = args.actRows ?? 'turn';
  if (actRows !== 'turn' && actRows !== 'episode')
    throw new StudioError('USAGE', `--act-rows must be turn or episode, not "${actRows}".`);
  let heldOutFraction: number | undefined;
  if (args.splitByTask !== undefined) {
    heldOutFraction = requireNumber(args.splitByTask, OUTSIDE_NUMBERS.flagHeldOut, undefined, {
      text: true,
      advice: 'It is the held-out fraction of the tasks, e.g. 0.2.',
    });
  }
  const seed = requireNumber(args.seed, OUTSIDE_NUMBERS.flagSeed, 0, { text: true });
  return { out: args.out, format, source, roles, rehearsePrompt, actRows, heldOutFraction, seed };
}

/** One exported row or record, written once the split is known (`index`: its number in its file). */
interface ExportItem {
  task: string;
  text: (index: number) => string;
}

/** What the export found, as a line for people and an object for --json. */
interface Collected {
  summaryText: string;
  summaryJson: Record<string, unknown>;
}

type TaskFiles = Map<string, TaskFile> | undefined;

/** `--format envace`: EnvACE's tool dataset records. */
async function collectEnvace(
  files: string[],
  args: ExportArgs,
  runs: Set<string> | undefined,
  taskFiles: TaskFiles,
  items: ExportItem[],
): Promise<Collected> {
  const summary = await exportEnvace(
    files,
    { onlySuccessful: !!args.onlySuccessful, runs, tasks: taskFiles },
    (record: EnvaceRecord) => {
      // `index` counts within each file; `original_index` is the record's number in the whole export:
      // EnvACE looks every call up by `uuid = original_index` in one JSON that serves train and
      // validation (agent_system/dataset/checklist_dataset.py, env_kwargs.uuid), so the two split
      // files must not reuse a number.
      items.push({
        task: record.extra_info.studio_task,
        text: (index) => JSON.stringify({ ...record, extra_info: { ...record.extra_info, index } }),
      });
    },
  );
  const summaryText =
    `${counted(summary.records, 'EnvACE record')} from ${counted(summary.tasks.length, 'task')}` +
    (summary.skipped.length
      ? `; ${counted(summary.skipped.length, 'episode')} skipped:\n${summary.skipped.map((s) => `  ${s.episode}: ${s.reason}`).join('\n')}`
      : '') +
    (summary.skippedLines ? `\n${summary.skippedLines} unreadable trace lines skipped` : '') +
    (summary.checklists.calls
      ? `\n${counted(summary.checklists.calls, 'record')} without its task's checks: the checklist is one item per recorded call, so EnvACE's reward is not the studio's (give --tasks <task files or folders>)`
      : '') +
    (summary.unparsed.length
      ? `\n${counted(summary.unparsed.length, 'record')} ending on an act that did not parse, with EnvACE's error_tool_call message (EnvACE ends the episode there; the turns before it keep their reward):\n${summary.unparsed.map((u) => `  ${u.episode} (${u.task}): turn ${u.turn} (${u.code})`).join('\n')}`
      : '') +
    (summary.unfaithful.length
      ? `\n${counted(summary.unfaithful.length, 'checklist item')} EnvACE's judge cannot score as the studio did (the studio counts a call check's calls over the whole episode; EnvACE's judge sees one user turn's calls and passes an item that passes at any step of it):\n${summary.unfaithful.map((u) => `  ${u.episode} (${u.task}) ${u.item}, weight ${u.weight}, user turn ${u.turn + 1}: the studio ${u.studio ? 'passed' : 'failed'} it, EnvACE will ${u.envace ? 'pass' : 'fail'} it (the record's score ${u.scoreChange > 0 ? '+' : ''}${u.scoreChange})`).join('\n')}`
      : '');
  return { summaryText, summaryJson: { format: 'envace', ...summary } };
}

/**
 * The memories of `--memory-from` (recorded runs' committed episodes) and `--memory-file` (a recipe's
 * own), by task; undefined when neither is given. Each given source must hold at least one.
 */
async function memoriesOf(args: ExportArgs): Promise<Map<string, string[]> | undefined> {
  const recorded = args.memoryFrom?.length
    ? await readMemories((await Promise.all(args.memoryFrom.map(resolveTraceArgument))).flat())
    : undefined;
  if (recorded && recorded.size === 0)
    throw new StudioError(
      'USAGE',
      `--memory-from: no committed private-rehearsal episode with a memory in ${args.memoryFrom!.join(', ')} (record them with \`rehearse run --mode private\`).`,
    );
  const made = args.memoryFile ? await readMemoryFile(args.memoryFile) : undefined;
  if (made && made.size === 0)
    throw new StudioError('USAGE', `--memory-file ${args.memoryFile}: it holds no memory.`);
  if (!recorded || !made) return recorded ?? made;
  const both = new Map(recorded);
  for (const [task, list] of made) both.set(task, [...(both.get(task) ?? []), ...list]);
  return both;
}

/** `--format rows`: the trainer's act and rehearse rows. */
async function collectRows(
  files: string[],
  args: ExportArgs,
  settings: ExportSettings,
  runs: Set<string> | undefined,
  taskFiles: TaskFiles,
  items: ExportItem[],
): Promise<Collected> {
  const memories = await memoriesOf(args);
  if (memories && settings.source !== 'demonstration')
    throw new StudioError(
      'USAGE',
      '--memory-from and --memory-file write demonstrations again with a rehearsal memory; they go with --source demonstration.',
    );
  const summary = await exportRows(
    files,
    {
      actSource: settings.source,
      onlySuccessful: !!args.onlySuccessful,
      roles: settings.roles as ('act' | 'rehearse')[],
      actualRehearsals: args.actualRehearsals !== false,
      policyRehearsals: !!args.policyRehearsals,
      rehearsePrompt: settings.rehearsePrompt,
      taskInfo: taskFiles
        ? (id) => {
            const t = taskFiles.get(id);
            return t ? { examples: t.examples, system: t.system } : undefined;
          }
        : undefined,
      group: args.group ? (taskId) => `${taskId}/${args.group}` : undefined,
      actRows: settings.actRows,
      runs,
      tools: list(args.tools),
      onlyMismatches: !!args.onlyMismatches,
      annotations: args.annotations !== false,
      identifierSlots: !!args.identifierSlots,
      ...(memories ? { memories: (taskId: string) => memories.get(taskId) ?? [] } : {}),
    },
    (row: DatasetRow) => {
      items.push({ task: row.task ?? '', text: () => JSON.stringify(row) });
    },
  );
  const bySource = Object.entries(summary.bySource)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const skipped = [
    summary.skippedEpisodes ? counted(summary.skippedEpisodes, 'episode') : '',
    summary.skippedRuns ? `${counted(summary.skippedRuns, 'run')} (--runs)` : '',
    summary.filteredCalls
      ? `${counted(summary.filteredCalls, 'call')} (--tools/--only-mismatches)`
      : '',
    summary.skippedLines ? counted(summary.skippedLines, 'unreadable trace line') : '',
    summary.skippedAnnotationLines
      ? counted(summary.skippedAnnotationLines, 'unreadable annotation line')
      : '',
  ]
    .filter(Boolean)
    .join(', ');
  const summaryText =
    `${summary.rows.act} act and ${summary.rows.rehearse} rehearse rows from ${counted(summary.episodes, 'episode')} of ${counted(summary.tasks.length, 'task')}` +
    (bySource ? ` (${bySource})` : '') +
    (summary.annotatedCalls ? `; ${counted(summary.annotatedCalls, 'annotated call')}` : '') +
    (skipped ? `; skipped ${skipped}` : '');
  return { summaryText, summaryJson: { format: 'rows', ...summary } };
}

/** Writes the items to --out, or split by task into its train and held-out files. */
async function writeItems(
  items: ExportItem[],
  settings: ExportSettings,
  writeTrl?: (file: string, jsonl: string) => Promise<void>,
): Promise<Written[]> {
  const written: Written[] = [];
  const root = writeRootOf(path.dirname(path.resolve(settings.out)));
  const writeSelected = async (file: string, selected: ExportItem[]) => {
    const lines = selected.map((item, i) => item.text(i));
    const text =
      settings.format === 'envace'
        ? `[\n${lines.join(',\n')}\n]\n`
        : lines.map((l) => l + '\n').join('');
    // --format trl: checked as every export's file is (its folder made inside the root), then written
    // by the trainer (pyarrow) through its own write path.
    if (settings.format === 'trl' && writeTrl) await writeTrl(file, text);
    else await writeFileInside(root, file, text);
    written.push({
      file,
      items: selected.length,
      tasks: [...new Set(selected.map((s) => s.task))].sort(),
    });
  };
  if (settings.heldOutFraction !== undefined) {
    const split = splitTasks(
      items.map((i) => i.task),
      settings.heldOutFraction,
      settings.seed,
    );
    const names = splitFileNames(settings.out);
    await writeSelected(
      names.train,
      items.filter((i) => split.train.has(i.task)),
    );
    await writeSelected(
      names.heldOut,
      items.filter((i) => split.heldOut.has(i.task)),
    );
  } else {
    await writeSelected(settings.out, items);
  }
  return written;
}
