import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import type { RehearsePromptOptions } from '../../core/protocol/rehearsePrompt';
import { loadTasks } from '../../core/tasks/loader';
import { resolveTraceArgument } from '../../core/trace/discover';
import { exportRows } from '../../core/training/exportRows';
import type { CliIO } from '../io';

/** Options of `rehearse export`. */
export interface ExportArgs {
  out?: string;
  source?: string;
  onlySuccessful?: boolean;
  roles?: string;
  actualRehearsals?: boolean;
  policyRehearsals?: boolean;
  tasks?: string[];
  rehearsePrompt?: string;
  group?: string;
  actRows?: string;
  /** False with --no-annotations. */
  annotations?: boolean;
}

/** `rehearse export <trace...> --out rows.jsonl`: training rows for the trainer from recorded runs. */
export async function exportCommand(traces: string[], args: ExportArgs, io: CliIO): Promise<number> {
  if (!args.out) throw new StudioError('USAGE', 'Missing --out <file.jsonl>: where to write the rows.');
  const source = args.source ?? 'demonstration';
  if (source !== 'demonstration' && source !== 'rollout') throw new StudioError('USAGE', `--source must be demonstration or rollout, not "${source}".`);
  const roles = (args.roles ?? 'act,rehearse').split(',').map((r) => r.trim());
  for (const r of roles) if (r !== 'act' && r !== 'rehearse') throw new StudioError('USAGE', `--roles takes act and/or rehearse, not "${r}".`);
  let rehearsePrompt: RehearsePromptOptions | undefined;
  if (args.rehearsePrompt) {
    try { rehearsePrompt = JSON.parse(args.rehearsePrompt) as RehearsePromptOptions; } catch {
      throw new StudioError('USAGE', '--rehearse-prompt must be a JSON object, e.g. \'{"includeTools": false}\'.');
    }
  }
  const actRows = args.actRows ?? 'turn';
  if (actRows !== 'turn' && actRows !== 'episode') throw new StudioError('USAGE', `--act-rows must be turn or episode, not "${actRows}".`);
  const files = (await Promise.all(traces.map(resolveTraceArgument))).flat();
  const tasks = args.tasks?.length ? new Map((await loadTasks(args.tasks)).map((t) => [t.task.id, t.task])) : undefined;
  await mkdir(path.dirname(path.resolve(args.out)), { recursive: true });
  const out = createWriteStream(args.out);
  const summary = await exportRows(files, {
    actSource: source,
    onlySuccessful: !!args.onlySuccessful,
    roles: roles as ('act' | 'rehearse')[],
    actualRehearsals: args.actualRehearsals !== false,
    policyRehearsals: !!args.policyRehearsals,
    rehearsePrompt,
    taskInfo: tasks ? (id) => { const t = tasks.get(id); return t ? { examples: t.examples, system: t.system } : undefined; } : undefined,
    group: args.group ? (taskId) => `${taskId}/${args.group}` : undefined,
    actRows,
    annotations: args.annotations !== false,
  }, (row) => out.write(JSON.stringify(row) + '\n'));
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  io.out(`wrote ${summary.rows.act} act and ${summary.rows.rehearse} rehearse rows from ${summary.episodes} episodes to ${args.out}` +
    (summary.skippedEpisodes ? ` (${summary.skippedEpisodes} episodes skipped)` : '') + (summary.skippedLines ? ` (${summary.skippedLines} unreadable trace lines skipped)` : '') +
    (summary.annotatedCalls ? `; ${summary.annotatedCalls} annotated call${summary.annotatedCalls === 1 ? '' : 's'}` : '') +
    (summary.skippedAnnotationLines ? ` (${summary.skippedAnnotationLines} unreadable annotation lines skipped)` : ''));
  return 0;
}
