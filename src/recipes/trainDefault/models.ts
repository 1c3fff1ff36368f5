import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { removeTree, writeJson, writeText } from '../shared/files';
import { rehearse } from '../shared/studio';
import { trainerCommand, trainingRun } from '../shared/training';
import type { TrainContext } from './context';
import { eventLogger, policySettings, relativeToWork } from './context';
import { copyTasks, exportDemonstrations } from './data';
import { sftPlan, writeRunFile, writeSftJob } from './runFiles';

/** Whether `dir` holds a model (its config.json). */
export function isModelFolder(dir: string): boolean {
  return existsSync(path.join(dir, 'config.json'));
}

/** The tokenizer: byte-level BPE on the demonstrations' rows. */
export async function tokenizerStage(ctx: TrainContext): Promise<void> {
  const config = path.join(ctx.settings.work, 'tokenizer.json');
  await writeJson(config, {
    seed: ctx.recipe.seed,
    out_dir: relativeToWork(ctx, ctx.paths.tokenizer),
    tokenizer: { row_files: [relativeToWork(ctx, ctx.paths.rows)], ...ctx.recipe.tokenizer },
  });
  await trainerCommand('tokenizer', config, eventLogger(ctx));
}

/** The model's random initialisation. */
export async function initStage(ctx: TrainContext): Promise<void> {
  const config = path.join(ctx.settings.work, 'init-config.json');
  await writeJson(config, {
    seed: ctx.recipe.seed,
    out_dir: relativeToWork(ctx, ctx.paths.init),
    model: {
      tokenizer: relativeToWork(ctx, ctx.paths.tokenizer),
      architecture: ctx.recipe.architecture,
    },
  });
  await trainerCommand('init', config, eventLogger(ctx));
}

/**
 * How the policy is prompted (its rehearse prompt, token limits, identifier slots) travels with its
 * tokenizer through init, SFT and GRPO (the trainer copies rehearsal_config.json along): GRPO's
 * rollouts then prompt each exported checkpoint as the final policy will be prompted.
 */
export async function writePolicySettings(ctx: TrainContext): Promise<void> {
  const { paths } = ctx;
  for (const dir of [paths.tokenizer, paths.init, path.join(paths.sft, 'tokenizer')])
    if (existsSync(dir))
      await writeJson(path.join(dir, 'rehearsal_config.json'), policySettings(ctx.recipe));
}

/** The tokenizer, the SFT job, the initial model, then SFT on the demonstrations. */
export async function sftStages(ctx: TrainContext): Promise<void> {
  const { stages } = ctx;
  await stages.run('tokenizer', 'tokenizer (byte-level BPE on the demonstrations)', () =>
    tokenizerStage(ctx),
  );
  const sftRun = await writeSftJob(ctx);
  await stages.run('init', 'model (random initialisation)', () => initStage(ctx));
  await writePolicySettings(ctx);
  const processes = sftPlan(ctx).processes;
  await stages.run('sft', 'SFT on the demonstrations (act and rehearse roles)', () =>
    trainingRun(sftRun, { processes, onEvent: eventLogger(ctx) }),
  );
}

/** The memory stage: the SFT policy rehearses privately; its memories' rows, with a memory only. */
async function memoriesStage(ctx: TrainContext, memoryRows: string): Promise<void> {
  const { recipe, paths, settings } = ctx;
  const memory = recipe.memory!;
  const memoryDir = path.join(settings.work, 'tasks/memory');
  const memoryRuns = path.join(settings.work, 'runs/memory');
  await removeTree(memoryDir);
  await removeTree(memoryRuns);
  for (const domain of recipe.domains)
    await copyTasks(
      path.join(paths.tasks.demo, domain),
      path.join(memoryDir, domain),
      memory.tasks,
    );
  await rehearse(
    'run',
    memoryDir,
    ...['--policy', path.join(paths.sft, 'final'), '--mode', 'private'],
    ...['--budget', String(memory.budget), '--order', memory.order],
    ...['--rehearsal-temperature', String(memory.temperature), '--seed', String(recipe.seed)],
    ...['--out', memoryRuns, '--no-progress'],
  );
  await exportDemonstrations(ctx, memoryRows, ['--roles', 'act', '--memory-from', memoryRuns]);
  // Only the rows read with a memory: the plain demonstrations are in the SFT rows already.
  const lines = (await readFile(memoryRows, 'utf8')).split('\n').filter(Boolean);
  const kept = lines.filter((l) => /\/memory-\d+$/.test((JSON.parse(l) as { id: string }).id));
  if (!kept.length) throw new Error(`no demonstration was exported with a memory (${memoryRuns})`);
  await writeText(memoryRows, kept.join('\n') + '\n');
  ctx.log(`  ${kept.length} demonstration rows read with a rehearsal memory`);
}

/**
 * Private rehearsal the policy was trained for (recipe.memory): the SFT policy rehearses privately
 * on some of the demonstration tasks (imagined attempts, then the memory its committed episode
 * reads); the demonstrations of those tasks are exported again with each memory in their prompt, and
 * SFT continues on all the demonstrations plus those, so that the memory prompt is not new at test
 * time. Returns the model GRPO starts from.
 */
export async function memoryStages(ctx: TrainContext): Promise<string> {
  const { recipe, paths, stages, settings } = ctx;
  if (!recipe.memory) return path.join(paths.sft, 'final');
  const memoryRows = path.join(settings.work, 'rows/memory.jsonl');
  await stages.run(
    'memories',
    'private rehearsal by the SFT policy (memories on demonstration tasks)',
    () => memoriesStage(ctx, memoryRows),
  );
  const sft = sftPlan(ctx);
  const memorySft = recipe.memory.sft;
  await stages.run(
    'sft-memory',
    'SFT with rehearsal memories (continued from the SFT policy)',
    async () => {
      const runFile = await writeRunFile(ctx, 'sft-memory', {
        objective: 'sft',
        base: path.join(paths.sft, 'final'),
        outDir: paths.memorySft,
        train: [paths.rows, memoryRows],
        ...(sft.threads !== undefined ? { threads: sft.threads } : {}),
        processes: sft.processes,
        hyperparameters: {
          ...sft.rest,
          ...memorySft,
          data: sft.rest.data,
          train: { ...sft.rest.train, ...memorySft.train, export_at_end: true },
        },
      });
      await trainingRun(runFile, { processes: sft.processes, onEvent: eventLogger(ctx) });
    },
  );
  return path.join(paths.memorySft, 'final');
}
