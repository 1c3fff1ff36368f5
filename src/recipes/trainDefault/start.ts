import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { copyInto, readJsonOr, removeTree, writeJson, writeText } from '../shared/files';
import { stepKey } from '../shared/stages';
import { shown } from '../shared/studio';
import type { TrainContext } from './context';
import { isModelFolder } from './models';
import { MODEL_FILES, onnxFiles, sha256 } from './policyFiles';
import type { FromStage, Recipe, Stage } from './settings';
import { STAGES } from './settings';

/** What a published policy's manifest.json says of how it was made (the parts carried on). */
interface StartManifest {
  command?: string;
  history?: string;
  stageMinutes?: Record<string, number>;
  copyProbe?: unknown;
}

/** Where the copy of START is kept, and what it was copied from. */
const startPaths = (work: string) => ({
  dir: path.join(work, 'start'),
  record: path.join(work, 'start.json'),
});

/**
 * The training stages `--from <stage>` takes from START instead of running: every stage from the
 * tokenizer up to the one before `from` that this recipe has (memories and sft-memory only with
 * recipe.memory). The data stages before them (tasks, demonstrations) still run: later stages read
 * their tasks and rows.
 */
export function takenStages(from: FromStage, recipe: Recipe): Stage[] {
  const all = STAGES.slice(STAGES.indexOf('tokenizer'), STAGES.indexOf(from));
  return all.filter((s) => recipe.memory || (s !== 'memories' && s !== 'sft-memory'));
}

/** The key of a policy folder's contents: its files' hashes (a START replaced by another changes it). */
export async function policyKey(dir: string): Promise<string> {
  const files: Record<string, string> = {};
  for (const f of [...MODEL_FILES, 'rehearsal_config.json', ...onnxFiles(dir)])
    if (existsSync(path.join(dir, f))) files[f] = await sha256(path.join(dir, f));
  return stepKey(files);
}

/**
 * `--from` with START: a copy of START in WORK/start (START may be MODEL itself, which the model
 * stage replaces), made again when START's contents changed; the taken stages' minutes from START's
 * manifest; and a line in WORK/history.txt that the manifest carries, after START's own history.
 * Resolves with the copy (the `from` stage's start) and its key.
 */
export async function takeStart(ctx: TrainContext): Promise<{ start: string; key: string }> {
  const { settings, recipe, stages } = ctx;
  const from = settings.from!;
  const source = settings.start!;
  if (!isModelFolder(source))
    throw new Error(
      `START=${source} holds no policy (no config.json): name a policy folder such as models/default.`,
    );
  const { dir, record } = startPaths(settings.work);
  const key = await policyKey(source);
  const kept = await readJsonOr<{ key?: string }>(record, {});
  if (kept.key === key && isModelFolder(dir)) return { start: dir, key };
  await removeTree(dir);
  const files = [...MODEL_FILES, 'rehearsal_config.json', 'manifest.json', ...onnxFiles(source)];
  for (const f of files)
    if (existsSync(path.join(source, f))) await copyInto(path.join(source, f), path.join(dir, f));
  const manifest = await readJsonOr<StartManifest>(path.join(source, 'manifest.json'), {});
  const taken = takenStages(from, recipe);
  const minutes = { ...(await stages.minutes()) };
  for (const s of taken) {
    const m = manifest.stageMinutes?.[s];
    if (m !== undefined) minutes[s] = m;
  }
  await writeJson(stages.minutesFile, minutes);
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const line =
    `${when} UTC: the stages ${taken[0]} through ${taken[taken.length - 1]} were taken from ${shown(source)} ` +
    `(${manifest.history ? "its manifest's history above; " : ''}its files' key ${key}); this run made ${from} and the stages after it: ` +
    `START=${shown(source)} npm run train:default -- --from ${from}.`;
  const history = path.join(settings.work, 'history.txt');
  const before = existsSync(history) ? (await readFile(history, 'utf8')).trim() : manifest.history;
  await writeText(history, [before, line].filter(Boolean).join('\n') + '\n');
  await writeJson(record, { key, from: source, copied: new Date().toISOString() });
  ctx.log(`  ${taken.join(', ')}: taken from ${source}`);
  return { start: dir, key };
}

/** START's copy probe (SFT's last), which a run `--from` a later stage never computes itself. */
export async function startCopyProbe(work: string): Promise<Record<string, unknown>> {
  const manifest = await readJsonOr<StartManifest>(
    path.join(startPaths(work).dir, 'manifest.json'),
    {},
  );
  return manifest.copyProbe ? { copyProbe: manifest.copyProbe } : {};
}
