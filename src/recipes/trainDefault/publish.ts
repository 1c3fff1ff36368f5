import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { copyInto, makeDir, readJson, removeTree, writeJson } from '../shared/files';
import { rehearse } from '../shared/studio';
import type { TrainContext } from './context';
import { policySettings } from './context';
import { MODEL_FILES, onnxFiles, sha256 } from './policyFiles';
import { realGrpoFinal } from './realGrpo';
import { startCopyProbe } from './start';

/** The policy folder MODEL, from the last GRPO's final model (real-rollout GRPO's when the recipe has it). */
export async function modelStage(ctx: TrainContext): Promise<void> {
  const final = ctx.recipe.realGrpo ? realGrpoFinal(ctx) : path.join(ctx.paths.grpo, 'final');
  const model = ctx.settings.model;
  await removeTree(model);
  await makeDir(path.join(model, 'onnx'));
  for (const f of [...MODEL_FILES, ...onnxFiles(final)])
    await copyInto(path.join(final, f), path.join(model, f));
  await writeJson(path.join(model, 'rehearsal_config.json'), policySettings(ctx.recipe));
}

/** The figures of `rehearse run --json` that the manifest keeps. */
interface RunJson {
  run: { status: string };
  report: {
    episodes: number;
    graded: number;
    successes: number;
    meanReward: number | null;
    turns: number;
    actParseValid: number;
    rehearsed: number;
    rehearsalParseValid: number;
    overall: Record<string, unknown>;
    perTool: unknown;
    parseErrors: unknown;
  };
}

/** The manifest's scores from the evaluation run. */
export function manifestScores({ run, report }: RunJson): Record<string, unknown> {
  const o = report.overall;
  const fidelity = [
    'compared',
    'exactMatch',
    'fieldF1',
    'keyJaccard',
    'typeAgreement',
    'errorAgreement',
  ];
  return {
    split: 'test',
    mode: 'shadow',
    episodes: report.episodes,
    taskSuccess: report.graded ? report.successes / report.graded : null,
    meanReward: report.meanReward,
    toolCallParseValidity: report.turns ? report.actParseValid / report.turns : null,
    rehearsalJsonValidity: report.rehearsed ? report.rehearsalParseValid / report.rehearsed : null,
    fidelity: Object.fromEntries(fidelity.map((k) => [k, o[k]])),
    perTool: report.perTool,
    parseErrors: report.parseErrors,
    runStatus: run.status,
  };
}

/** `{ copyProbe }`: the last `probe` event of a trainer's events file without its samples, or nothing. */
export async function lastProbe(eventsFile: string): Promise<Record<string, unknown>> {
  if (!existsSync(eventsFile)) return {};
  let last: Record<string, unknown> | undefined;
  for (const line of (await readFile(eventsFile, 'utf8')).split('\n')) {
    if (!line.includes('"probe"')) continue;
    try {
      const e = JSON.parse(line) as Record<string, unknown>;
      if (e.event === 'probe') last = e;
    } catch {
      /* a torn last line */
    }
  }
  if (!last) return {};
  const { samples: _samples, event: _event, t: _t, ...figures } = last;
  return { copyProbe: figures };
}

/** This machine, and its load while the command ran (1-minute load average, sampled each minute). */
export function machine(loadSamples: readonly number[]): Record<string, unknown> {
  const mean = loadSamples.reduce((a, b) => a + b, 0) / loadSamples.length;
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    load1m: {
      mean: Number(mean.toFixed(2)),
      max: Number(Math.max(...loadSamples).toFixed(2)),
      samples: loadSamples.length,
    },
  };
}

/** Every stage's wall minutes over all the runs that built this policy, and their sum. */
async function stageMinutes(ctx: TrainContext): Promise<Record<string, unknown>> {
  const m = await ctx.stages.minutes();
  const sum = Object.values(m).reduce((a, b) => a + b, 0);
  return { stageMinutes: m, wallMinutes: Number(sum.toFixed(1)) };
}

/** The evaluation on the test split (shadow mode, real tools) and the manifest with its scores. */
export async function evalStage(ctx: TrainContext, loadSamples: readonly number[]): Promise<void> {
  const { settings, recipe, paths } = ctx;
  const evalRuns = path.join(settings.work, 'runs/eval');
  await removeTree(evalRuns);
  const model = settings.model;
  const out = await rehearse(
    'run',
    paths.tasks.test,
    '--policy',
    model,
    '--out',
    evalRuns,
    '--no-progress',
    '--json',
  );
  const files: Record<string, string> = {};
  for (const f of [...MODEL_FILES, 'rehearsal_config.json', ...onnxFiles(model)])
    files[f] = await sha256(path.join(model, f));
  const counts = recipe.tasks;
  const history = path.join(settings.work, 'history.txt');
  await writeJson(path.join(model, 'manifest.json'), {
    name: 'rehearsal-studio-default',
    description: recipe.description,
    command: 'npm run train:default',
    recipe,
    data: {
      demonstrations: { tasksPerDomain: counts.demonstrations, rows: await sha256(paths.rows) },
      grpo: { tasksPerDomain: counts.grpo },
      ...(recipe.realGrpo
        ? {
            grpoReal: {
              tasksPerDomain: recipe.realGrpo.tasksPerDomain,
              split: `train (seeds from ${recipe.realGrpo.start})`,
            },
          }
        : {}),
      test: { tasksPerDomain: counts.test, split: 'test (seed % 10 == 9)' },
    },
    files,
    scores: manifestScores(JSON.parse(out) as RunJson),
    // SFT's last copy probe (held-out validation-split act rows, greedy): did the policy learn to copy?
    ...(settings.from
      ? await startCopyProbe(settings.work)
      : await lastProbe(path.join(paths.sft, 'events.jsonl'))),
    trainedMinutes: Math.round((Date.now() - ctx.log.started) / 60000),
    // The evaluation's own minutes are added on its next run.
    ...(await stageMinutes(ctx)),
    // This command's own run (a resumed run counts from its restart; earlier stages were skipped).
    machine: machine(loadSamples),
    // How this run was pieced together, when it was not one uninterrupted local run (WORK/history.txt,
    // written by whoever moved a stage elsewhere, e.g. SFT to a GPU machine).
    ...(existsSync(history) ? { history: (await readFile(history, 'utf8')).trim() } : {}),
  });
  const manifest = await readJson<{ scores: unknown }>(path.join(model, 'manifest.json'));
  ctx.log(`scores: ${JSON.stringify(manifest.scores).slice(0, 400)}`);
}
