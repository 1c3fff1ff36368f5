import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { loadTasks } from '../../core/tasks/format/loader';
import type { DatasetRow } from '../../core/training/datasetRow';
import { readTraceEvents } from '../../core/trace/format/reader';
import { removeTree, writeText } from '../shared/files';
import { cachedStep, stepKey } from '../shared/stages';
import { rehearse } from '../shared/studio';
import type { TaskFolder } from '../trainDefault/grpoArm';
import { HELDOUT_START as BUILTIN_HELDOUT_START } from '../measureEnvace/settings';
import type { ForesightContext } from './context';
import type { FlipCount, LoggedWrite, Verdict } from './memories';
import { flipRateOf, taskMemories } from './memories';
import {
  BUDGET,
  FORESIGHT_GRPO_START,
  FORESIGHT_HELDOUT_START,
  FORESIGHT_TRAIN_START,
} from './settings';
import { loggedWrites } from './traces';

/** One `rehearse generate` into a task folder. */
interface Generated {
  generator: string;
  split: 'train' | 'test';
  start: number;
  count: number;
  demonstrations?: boolean;
}

const BUILTIN_DOMAINS = ['retail', 'bank'];
/** The seed of which memories are flipped (and of the other-verdict writes they are made of). */
const FLIP_SEED = 41;

/** Every task folder of the recipe, by name: what generates it (its seeds: settings.ts). */
export function taskSets(ctx: ForesightContext): Record<string, Generated[]> {
  const s = ctx.settings;
  const train = (generator: string, count: number, demonstrations = false): Generated => ({
    generator,
    split: 'train',
    start: FORESIGHT_TRAIN_START,
    count,
    ...(demonstrations ? { demonstrations } : {}),
  });
  const test = (generator: string, start: number, count: number): Generated => ({
    generator,
    split: 'test',
    start,
    count,
  });
  return {
    'demo-foresight': [train('bank-foresight', s.demonstrations, true)],
    'demo-twin': [train('bank-foresight-twin', s.demonstrations, true)],
    memory: [train('bank-foresight', s.memoryTasks)],
    logged: [train('bank-foresight-logging', s.logged)],
    'demo-builtin': s.builtinDemonstrations
      ? BUILTIN_DOMAINS.map((d) => train(d, s.builtinDemonstrations))
      : [],
    grpo: [
      {
        generator: 'bank-foresight',
        split: 'train',
        start: FORESIGHT_GRPO_START,
        count: s.grpoTasks * s.iterations,
      },
    ],
    heldout: [test('bank-foresight', FORESIGHT_HELDOUT_START, s.heldout)],
    'heldout-twin': [test('bank-foresight-twin', FORESIGHT_HELDOUT_START, s.heldout)],
    'heldout-logged': [test('bank-foresight-logging', FORESIGHT_HELDOUT_START, s.heldout)],
    // measure:envace's held-out tasks of the built-in domains.
    'heldout-builtin': BUILTIN_DOMAINS.map((d) => test(d, BUILTIN_HELDOUT_START, s.builtinHeldout)),
  };
}

/** A task folder of the recipe: `<WORK>/tasks/<name>`, one subfolder per generator. */
export function taskFolder(ctx: ForesightContext, name: string): TaskFolder {
  return { dir: path.join(ctx.settings.work, 'tasks', name), holds: taskSets(ctx)[name] };
}

/** Generates every task folder (each once, again when its part of the settings changed). */
export async function generateTasks(ctx: ForesightContext): Promise<void> {
  for (const [name, sets] of Object.entries(taskSets(ctx))) {
    if (!sets.length) continue;
    const folder = taskFolder(ctx, name);
    await cachedStep(
      ctx.settings.work,
      { name: `tasks-${name}`, key: stepKey(sets) },
      ctx.log,
      async () => {
        await removeTree(folder.dir);
        for (const g of sets)
          await rehearse(
            ...['generate', g.generator, '--split', g.split, '--start', String(g.start)],
            ...['--count', String(g.count), '--out', path.join(folder.dir, g.generator)],
            ...(g.demonstrations ? ['--demonstrations'] : []),
          );
        return { sets };
      },
    );
  }
}

/** The reference policy's run of a task folder (real tools), once; resolves with its trace. */
export async function referenceRun(ctx: ForesightContext, name: string): Promise<string> {
  const folder = taskFolder(ctx, name);
  const done = await cachedStep(
    ctx.settings.work,
    { name: `reference-${name}`, key: stepKey(folder.holds) },
    ctx.log,
    async () => {
      const runs = path.join(ctx.settings.work, 'runs', `reference-${name}`);
      await removeTree(runs);
      const out = await rehearse(
        ...['run', folder.dir, '--policy', 'reference', '--out', runs, '--no-progress', '--json'],
      );
      return { trace: (JSON.parse(out) as { run: { traceFile: string } }).run.traceFile };
    },
  );
  return done.trace;
}

/** `rehearse export` options for BASE's prompt: its rehearse prompt and identifier slots. */
function promptArgs(ctx: ForesightContext): string[] {
  const { rehearsePrompt, identifierSlots } = ctx.prompt;
  return [
    ...(rehearsePrompt !== undefined ? ['--rehearse-prompt', JSON.stringify(rehearsePrompt)] : []),
    ...(identifierSlots ? ['--identifier-slots'] : []),
  ];
}

/** A rows file the SFT arms train on, and the key of the step that wrote it. */
export interface Rows {
  file: string;
  rows: number;
  key: string;
}

const readRows = async (file: string): Promise<DatasetRow[]> =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as DatasetRow);

/** `rehearse export` of a reference run of `name` with `args`, once, into `rows/<file>.jsonl`. */
async function exported(
  ctx: ForesightContext,
  name: string,
  file: string,
  args: string[],
): Promise<Rows> {
  const trace = await referenceRun(ctx, name);
  const out = path.join(ctx.settings.work, 'rows', `${file}.jsonl`);
  const all = [...args, ...promptArgs(ctx)];
  const key = stepKey({ tasks: taskFolder(ctx, name).holds, args: all });
  const done = await cachedStep(
    ctx.settings.work,
    { name: `rows-${file}`, key },
    ctx.log,
    async () => {
      await rehearse('export', trace, '--out', out, ...all);
      return { rows: (await readRows(out)).length };
    },
  );
  return { file: out, rows: done.rows, key };
}

/** The demonstrations' act rows (no memory): allowed tasks only for the main family, both for the twin. */
export const demonstrationRows = (ctx: ForesightContext, family: 'foresight' | 'twin') =>
  exported(ctx, `demo-${family}`, `demo-${family}`, [
    ...['--only-successful', '--act-rows', 'episode', '--roles', 'act'],
  ]);

/** The logged write calls' rehearse rows: the real responses, ok and refused, as targets. */
export const loggedRows = (ctx: ForesightContext) =>
  exported(ctx, 'logged', 'logged', ['--roles', 'rehearse']);

/**
 * The built-in domains' demonstrations (act and rehearse rows, as train:default exports them),
 * replayed in both SFTs so that continued SFT on the foresight family does not wash out the skills
 * the built-in comparison measures; none when BUILTIN_DEMOS is 0.
 */
export async function builtinRows(ctx: ForesightContext): Promise<Rows[]> {
  if (!ctx.settings.builtinDemonstrations) return [];
  return [
    await exported(ctx, 'demo-builtin', 'demo-builtin', [
      ...['--only-successful', '--act-rows', 'episode'],
    ]),
  ];
}

/** The memory-reading rows, and their flip rate measured on the rows themselves. */
export interface MemoryRows extends Rows {
  flip: FlipCount;
  /** The memories written (one a task with a logged write) and how many of them were flipped. */
  memories: number;
  flippedMemories: number;
}

/** The true outcome of each memory-reading task's transfer: its logged write, by the task's seed. */
async function writesBySeed(ctx: ForesightContext): Promise<Map<number, LoggedWrite>> {
  const { events } = await readTraceEvents(await referenceRun(ctx, 'logged'));
  const byTask = loggedWrites(events);
  const bySeed = new Map<number, LoggedWrite>();
  for (const { task } of await loadTasks([taskFolder(ctx, 'logged').dir])) {
    const write = byTask.get(task.id);
    if (write && task.seed !== undefined) bySeed.set(task.seed, write);
  }
  return bySeed;
}

/**
 * The memory-reading rows (issue 41, part 3): the reference runs of MEMORY_TASKS train tasks of the
 * main family, both verdicts (a refused task's demonstration is its refusal answer), exported again
 * with an `outcomes` memory each (`rehearse export --memory-file`), as the committed episode of
 * private rehearsal at budget {@link BUDGET} reads it; the memory is the task's logged true outcome,
 * flipped on FLIP_RATE of the tasks. Only the rows read with a memory are kept: the main family's
 * act never sees a refusal without one. Fails unless the rows' memories disagree with the truth on
 * exactly the planned share.
 */
export async function memoryRows(ctx: ForesightContext): Promise<MemoryRows> {
  const s = ctx.settings;
  const trace = await referenceRun(ctx, 'memory');
  const out = path.join(s.work, 'rows', 'memory.jsonl');
  const key = stepKey({
    tasks: taskFolder(ctx, 'memory').holds,
    logged: taskFolder(ctx, 'logged').holds,
    flipRate: s.flipRate,
    budget: BUDGET,
    prompt: promptArgs(ctx),
  });
  const done = await cachedStep(s.work, { name: 'rows-memory', key }, ctx.log, async () => {
    const writes = await writesBySeed(ctx);
    const tasks = (await loadTasks([taskFolder(ctx, 'memory').dir])).flatMap(({ task }) =>
      task.seed !== undefined ? [{ id: task.id, seed: task.seed }] : [],
    );
    const memories = taskMemories(tasks, writes, {
      flipRate: s.flipRate,
      budget: BUDGET,
      seed: FLIP_SEED,
    });
    const memoryFile = path.join(s.work, 'rows', 'memories.jsonl');
    await writeText(
      memoryFile,
      memories.map((m) => JSON.stringify({ task: m.task, memory: m.memory }) + '\n').join(''),
    );
    await rehearse(
      ...['export', trace, '--out', out, '--memory-file', memoryFile],
      ...['--only-successful', '--act-rows', 'episode', '--roles', 'act', ...promptArgs(ctx)],
    );
    const kept = (await readRows(out)).filter((r) => /\/memory-\d+$/.test(r.id));
    if (!kept.length) throw new Error(`no memory-reading row was exported (${trace})`);
    await writeText(out, kept.map((r) => JSON.stringify(r) + '\n').join(''));
    const truth = new Map<string, Verdict>(memories.map((m) => [m.task, m.truth]));
    const flip = flipRateOf(kept, truth);
    const planned = memories.filter((m) => m.flipped && kept.some((r) => r.task === m.task));
    if (flip.flipped !== planned.length)
      throw new Error(
        `the memory-reading rows disagree with the truth on ${flip.flipped} rows, ${planned.length} planned`,
      );
    ctx.log(
      `  ${kept.length} memory-reading rows, ${flip.flipped} (${(100 * flip.rate).toFixed(1)}%) with the opposite outcome`,
    );
    return {
      rows: kept.length,
      flip,
      memories: memories.length,
      flippedMemories: memories.filter((m) => m.flipped).length,
    };
  });
  return { file: out, key, ...done };
}
