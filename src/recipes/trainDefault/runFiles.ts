import * as path from 'node:path';
import { writeJson } from '../shared/files';
import type { TrainContext } from './context';
import { relativeToWork } from './context';
import type { JsonObject } from './settings';

/** What a run file of train:default says (docs/training-runs.md). */
export interface RunFileParts {
  objective: 'sft' | 'grpo';
  base: string;
  outDir: string;
  train?: string[];
  threads?: number;
  processes?: number;
  /** Passed to the trainer config as they are. */
  hyperparameters: JsonObject;
}

/** The run file's content: its paths relative to WORK, like the trainer configs'. */
export function runFileContent(ctx: TrainContext, name: string, parts: RunFileParts): JsonObject {
  const rel = (p: string) => relativeToWork(ctx, p);
  const { train = [], threads, processes = 1 } = parts;
  return {
    name,
    objective: parts.objective,
    base: rel(parts.base),
    out_dir: rel(parts.outDir),
    seed: ctx.recipe.seed,
    ...(train.length ? { data: { train: train.map(rel) } } : {}),
    hardware: {
      ...(threads !== undefined ? { threads } : {}),
      ...(processes > 1 ? { processes } : {}),
    },
    hyperparameters: parts.hyperparameters,
  };
}

/** Writes `<WORK>/<name>.run.json`; returns its path. */
export async function writeRunFile(
  ctx: TrainContext,
  name: string,
  parts: RunFileParts,
): Promise<string> {
  const file = path.join(ctx.settings.work, `${name}.run.json`);
  await writeJson(file, runFileContent(ctx, name, parts));
  return file;
}

/** The SFT stage's settings: hardware apart, the trainer's with an export at the end and the probe's rows. */
export function sftPlan(ctx: TrainContext): {
  threads?: number;
  processes: number;
  rest: JsonObject & { train?: JsonObject; data?: JsonObject };
  hyperparameters: JsonObject;
} {
  const { threads, processes = 1, probe, ...rest } = ctx.recipe.sft;
  const probeRows = relativeToWork(ctx, ctx.paths.probeRows);
  const hyperparameters = {
    ...rest,
    train: { ...rest.train, export_at_end: true },
    ...(probe && ctx.recipe.tasks.probe ? { probe: { ...probe, rows: [probeRows] } } : {}),
  };
  return { ...(threads !== undefined ? { threads } : {}), processes, rest, hyperparameters };
}

/**
 * Writes the SFT job twice, before the init stage, so that `--until init` leaves a complete job
 * another machine (a GPU one) can run from a copy of WORK: sft.run.json, which this recipe starts,
 * and the trainer's own config, sft-config.json, for a machine without the studio
 * (scripts/prepare-gpu-bench.sh copies it). Returns the run file.
 */
export async function writeSftJob(ctx: TrainContext): Promise<string> {
  const { paths, recipe, settings } = ctx;
  const rel = (p: string) => relativeToWork(ctx, p);
  const sft = sftPlan(ctx);
  await writeJson(path.join(settings.work, 'sft-config.json'), {
    seed: recipe.seed,
    threads: sft.threads,
    out_dir: rel(paths.sft),
    model: { path: rel(paths.init) },
    ...sft.hyperparameters,
    data: { ...sft.rest.data, train: [rel(paths.rows)] },
  });
  return writeRunFile(ctx, 'sft', {
    objective: 'sft',
    base: paths.init,
    outDir: paths.sft,
    train: [paths.rows],
    ...(sft.threads !== undefined ? { threads: sft.threads } : {}),
    processes: sft.processes,
    hyperparameters: sft.hyperparameters,
  });
}
