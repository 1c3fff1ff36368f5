import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { errorMessage } from '../../../src/core/base/errors';
import { planLaunch } from '../../../src/core/training/launch/backends';
import { parseRunSpec } from '../../../src/core/training/launch/runSpec';
import type { TrainingOutcome } from '../../../src/core/training/launch/supervisor';
import { latestCheckpoint, TrainingProcess } from '../../../src/core/training/launch/supervisor';
import { randomTestModel } from '../testModels';
import { weatherRows } from '../trainingRows';
import type { CrashReport } from './kill';
import { killDelays, killGroup, newCrashReport } from './kill';

/** Steps of each training run: long enough for kills to land in steps and checkpoint writes. */
const STEPS = 24;
const TRAINER_STATE = 'trainer_state.pt';
/** The weights file of a checkpoint, in either format the trainer writes. */
const WEIGHTS = ['pytorch_model.bin', 'model.safetensors'];

/** What a training crash campaign found besides the kills. */
export interface TrainingCrashReport extends CrashReport {
  /** Runs resumed to the end after kills and compared with the uninterrupted run. */
  finalsCompared: number;
  /** Launches that resumed from a checkpoint. */
  resumes: number;
}

/** A tiny SFT run file in `folder` (its run folder is `folder/.rehearsal/training/run`). */
async function writeRunFile(folder: string, model: string): Promise<string> {
  await fs.mkdir(folder, { recursive: true });
  await fs.writeFile(path.join(folder, 'rows.jsonl'), weatherRows());
  const file = path.join(folder, 'run.json');
  await fs.writeFile(
    file,
    JSON.stringify({
      objective: 'sft',
      base: model,
      seed: 5,
      data: { train: ['rows.jsonl'] },
      hardware: { device: 'cpu', threads: 1 },
      hyperparameters: {
        train: {
          steps: STEPS,
          batch_size: 4,
          micro_batch_size: 2,
          checkpoint_every: 2,
          keep_checkpoints: 2,
          export_at_end: false,
        },
      },
    }),
  );
  return file;
}

async function launch(runFile: string): Promise<TrainingProcess> {
  return TrainingProcess.start(
    planLaunch(parseRunSpec(await fs.readFile(runFile, 'utf8'), runFile), 'local'),
    { graceMs: 5000 },
  );
}

/** sha256 of every file of a model folder, by name: two runs that trained alike have equal digests. */
async function folderDigest(folder: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await fs.readdir(folder)).sort()) {
    const full = path.join(folder, name);
    if ((await fs.stat(full)).isFile())
      out[name] = createHash('sha256')
        .update(await fs.readFile(full))
        .digest('hex');
  }
  return out;
}

/**
 * The checkpoints of a killed run: the one a relaunch resumes from is complete (its trainer state
 * and weights are there), and every complete-named folder (not `.tmp`) is too.
 */
async function checkCheckpoints(outDir: string, where: string, report: CrashReport): Promise<void> {
  const root = path.join(outDir, 'checkpoints');
  if (!existsSync(root)) return;
  const latest = await latestCheckpoint(outDir);
  for (const name of await fs.readdir(root)) {
    if (!name.startsWith('step-') || name.endsWith('.tmp')) continue;
    const files = await fs.readdir(path.join(root, name));
    const complete =
      [TRAINER_STATE, 'config.json', 'tokenizer.json'].every((f) => files.includes(f)) &&
      files.some((f) => WEIGHTS.includes(f));
    // A folder being pruned may be half deleted; only the newest ones must be whole.
    if (!complete && latest && path.basename(latest) <= name)
      report.violations.push(`${where}: checkpoint ${name} is incomplete (${files.join(', ')})`);
    if (complete) report.recordsChecked++;
  }
  if (latest && !existsSync(path.join(latest, TRAINER_STATE)))
    report.violations.push(
      `${where}: checkpoints/latest names ${path.basename(latest)}, which has no ${TRAINER_STATE}`,
    );
}

/**
 * Kills a real training run (the trainer of trainer/ on a tiny model, started through the studio's
 * launcher) with SIGKILL at `kills` random moments; after each kill the checkpoints must be intact,
 * and launching the same run again resumes from the newest one. Each run resumed to the end must
 * hold exactly the weights of a run that was never killed.
 */
export async function crashTraining(options: {
  kills: number;
  seed: number;
  scratch: string;
  log?: (line: string) => void;
}): Promise<TrainingCrashReport> {
  const report: TrainingCrashReport = { ...newCrashReport(), finalsCompared: 0, resumes: 0 };
  const delay = killDelays(options.seed);
  const model = await randomTestModel(1);

  const t0 = performance.now();
  const straight = await (
    await launch(await writeRunFile(path.join(options.scratch, 'straight'), model))
  ).done;
  const fullMs = performance.now() - t0;
  if (straight.status !== 'done' || !straight.final)
    throw new Error(
      `the uninterrupted training run failed: ${straight.error?.message}\n${straight.stderrTail}`,
    );
  const expected = await folderDigest(straight.final);

  let runIndex = 0;
  let runFile = await writeRunFile(path.join(options.scratch, `killed-${runIndex}`), model);
  const finish = async (outcome: TrainingOutcome, where: string) => {
    if (outcome.resumedFrom) report.resumes++;
    if (outcome.status !== 'done' || !outcome.final) {
      report.violations.push(
        `${where}: the resumed run did not finish: ${outcome.error?.code} ${outcome.error?.message}`,
      );
      return;
    }
    const digest = await folderDigest(outcome.final);
    if (JSON.stringify(digest) !== JSON.stringify(expected))
      report.violations.push(
        `${where}: the resumed run's final weights differ from the uninterrupted run's`,
      );
    report.finalsCompared++;
    await fs.rm(path.dirname(runFile), { recursive: true, force: true });
    runFile = await writeRunFile(path.join(options.scratch, `killed-${++runIndex}`), model);
  };

  for (let k = 0; k < options.kills; k++) {
    const wait = delay(fullMs);
    const where = `kill ${k + 1} (after ${wait} ms, seed ${options.seed})`;
    try {
      const before = await latestCheckpoint(
        path.join(path.dirname(runFile), '.rehearsal', 'training', 'run'),
      );
      const proc = await launch(runFile);
      const timer = setTimeout(() => killGroup(proc.pid), wait);
      const outcome = await proc.done;
      clearTimeout(timer);
      report.kills++;
      report.killDelaysMs.push(wait);
      if (
        before &&
        outcome.events > 0 &&
        outcome.resumedFrom === undefined &&
        outcome.signal !== 'SIGKILL'
      )
        report.violations.push(
          `${where}: a checkpoint was there, but the run did not resume from it`,
        );
      if (outcome.status === 'done') {
        await finish(outcome, where);
        continue;
      }
      if (outcome.resumedFrom) report.resumes++;
      if (outcome.signal !== 'SIGKILL')
        report.violations.push(
          `${where}: the run failed by itself: ${outcome.error?.code} ${outcome.error?.message}`,
        );
      await checkCheckpoints(
        path.join(path.dirname(runFile), '.rehearsal', 'training', 'run'),
        where,
        report,
      );
    } catch (err) {
      report.violations.push(`${where}: ${errorMessage(err)}`);
    }
  }
  // The last killed run, resumed to the end.
  await finish(await (await launch(runFile)).done, 'the final resume');
  await fs.rm(path.dirname(runFile), { recursive: true, force: true });
  await fs.rm(path.join(options.scratch, 'straight'), { recursive: true, force: true });
  options.log?.(
    `training: ${report.kills} kills, ${report.resumes} resumes, ${report.finalsCompared} finals compared`,
  );
  return report;
}
