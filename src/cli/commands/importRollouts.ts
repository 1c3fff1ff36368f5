import * as path from 'node:path';
import { counted } from '../../core/base/counted';
import { errorMessage } from '../../core/base/errors';
import type { RolloutFile } from '../../core/tasks/import/envaceRolloutFiles';
import { listRolloutFiles, readRolloutFile } from '../../core/tasks/import/envaceRolloutFiles';
import type { RolloutTraceSummary } from '../../core/tasks/import/envaceRolloutTrace';
import { writeRolloutTrace } from '../../core/tasks/import/envaceRolloutTrace';
import type { CliIO } from '../io';
import { EXIT, progressBar } from '../io';
import { runsFolderArg } from '../runsFolderArg';

/** A line for stdout, or for stderr. */
interface Line {
  err: boolean;
  text: string;
}

/** Skipped lines named on stderr per file; every one is counted. */
const SKIPPED_LINES_SHOWN = 5;

/**
 * `rehearse import envace-rollouts <dir> [--out <runs folder>]`: one imagine-mode trace per rollout
 * file of EnvACE's `trainer.rollout_data_dir` (one per training step), in `.rehearsal/runs` or the
 * `--out` runs folder. Lines that are not rows are skipped and counted; a file that cannot be read
 * is reported and the others imported. Exit 1 only when no episode was imported.
 */
export async function importRolloutsCommand(
  dir: string,
  options: { out?: string; progress?: boolean },
  io: CliIO,
): Promise<number> {
  const runsDir = runsFolderArg(options.out);
  const entries = await listRolloutFiles(dir);
  const bar =
    options.progress === false || entries.length < 2
      ? undefined
      : progressBar({
          format: 'rollout files {bar} {value}/{total} | {file}',
          clearOnComplete: true,
          barsize: 24,
        });
  bar?.start(entries.length, 0, { file: '' });
  let episodes = 0;
  // Printed once the bar is gone: a line written under a progress bar is torn by its redraw.
  const lines: Line[] = [];
  try {
    for (const [i, entry] of entries.entries()) {
      bar?.update(i, { file: path.basename(entry.file) });
      let rollout: RolloutFile;
      let summary: RolloutTraceSummary;
      try {
        rollout = await readRolloutFile(entry.file);
        summary = await writeRolloutTrace(rollout, entry.step, runsDir);
      } catch (err) {
        lines.push({ err: true, text: `rehearse: ${entry.file}: skipped: ${errorMessage(err)}` });
        continue;
      }
      episodes += summary.episodes;
      lines.push(...fileLines(entry.file, rollout, summary));
    }
  } finally {
    bar?.stop();
  }
  for (const line of lines) (line.err ? io.err : io.out)(line.text);
  io.out(
    `imported ${counted(episodes, 'episode')} from ${counted(entries.length, 'rollout file')} of ${dir} into ${runsDir}`,
  );
  return episodes > 0 ? EXIT.ok : EXIT.failure;
}

/** What one file gave, for stdout, and its skipped lines, for stderr. */
function fileLines(file: string, rollout: RolloutFile, s: RolloutTraceSummary): Line[] {
  const name = path.basename(file);
  const out: Line[] = [
    {
      err: false,
      text: `${name}: ${counted(s.rows, 'row')} → ${counted(s.episodes, 'episode')}, ${counted(s.calls, 'call')} (${s.rehearsals} rehearsed, ${s.actuals} actual)${s.repeatedRows ? `, ${counted(s.repeatedRows, 'repeated row')} read once` : ''}${s.unlinkedRehearsals ? `, ${counted(s.unlinkedRehearsals, 'simulator row')} matching no call` : ''}${s.traceFile ? `: ${s.traceFile}` : ': nothing written'}`,
    },
  ];
  if (rollout.skippedCount > 0) {
    const shown = rollout.skipped
      .slice(0, SKIPPED_LINES_SHOWN)
      .map((l) => `line ${l.line} (${l.reason})`)
      .join(', ');
    const more = rollout.skippedCount - Math.min(rollout.skipped.length, SKIPPED_LINES_SHOWN);
    out.push({
      err: true,
      text: `${name}: ${counted(rollout.skippedCount, 'malformed line')} skipped: ${shown}${more > 0 ? `, and ${more} more` : ''}`,
    });
  }
  return out;
}
