import { readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { copyInto, makeDir, removeTree, writeText } from '../shared/files';
import { rehearse } from '../shared/studio';
import type { TrainContext } from './context';
import { slotArgs } from './context';
import type { Recipe } from './settings';
import { GROUNDED_MAX_EXAMPLES } from './settings';

/** `rehearse generate <domain> --split <split> --count <n> --out <dir>`. */
export async function generate(domain: string, split: string, count: number, out: string) {
  await rehearse('generate', domain, '--split', split, '--count', String(count), '--out', out);
}

/**
 * `rehearse verify <from> --examples-out <to>` into a fresh `to`: the tasks again, each with its
 * reference's calls and their real responses as examples (grounded imagination). Resolves with the
 * line that says how many got them.
 */
export async function groundTasks(from: string, to: string): Promise<string> {
  await removeTree(to);
  const out = await rehearse('verify', from, '--examples-out', to);
  return out.split('\n').find((line) => line.includes(' written with examples')) ?? '';
}

/** Copies the sorted first `count` (all when undefined) task files of `from` into `to`. */
export async function copyTasks(from: string, to: string, count?: number): Promise<void> {
  const files = (await readdir(from)).sort().slice(0, count);
  await makeDir(to);
  for (const f of files) await copyInto(path.join(from, f), path.join(to, f));
}

/** Tasks: the train split (demonstrations, then GRPO), the test split, the probe's validation tasks. */
export async function tasksStage(ctx: TrainContext): Promise<void> {
  const { recipe, paths } = ctx;
  const counts = recipe.tasks;
  for (const domain of recipe.domains) {
    const all = path.join(ctx.settings.work, 'tasks/all-train', domain);
    await generate(domain, 'train', counts.demonstrations + counts.grpo, all);
    const files = (await readdir(all)).sort();
    for (const [i, f] of files.entries()) {
      const dest = i < counts.demonstrations ? paths.tasks.demo : paths.tasks.grpo;
      await copyInto(path.join(all, f), path.join(dest, domain, f));
    }
    await generate(domain, 'test', counts.test, path.join(paths.tasks.test, domain));
    // The copy probe's held-out tasks: the validation split, never the test split.
    if (counts.probe)
      await generate(domain, 'validation', counts.probe, path.join(paths.tasks.probe, domain));
  }
}

/**
 * The demonstrations' training rows (one act row per episode), into `out`, with `extra` options;
 * `prompt` overrides the recipe's rehearse prompt options.
 */
export async function exportDemonstrations(
  ctx: TrainContext,
  out: string,
  extra: string[] = [],
  prompt: Recipe['rehearsePrompt'] = ctx.recipe.rehearsePrompt,
): Promise<void> {
  const { recipe } = ctx;
  await rehearse(
    'export',
    ctx.paths.demoRuns,
    '--out',
    out,
    // A recipe may keep the failed demonstrations (the GRPO sanity task's are half failures by design).
    ...(recipe.demonstrationsOnlySuccessful === false ? [] : ['--only-successful']),
    '--act-rows',
    'episode',
    '--rehearse-prompt',
    JSON.stringify(prompt),
    ...slotArgs(recipe),
    ...extra,
  );
}

/**
 * Grounded imagination (the recipe's grpo.groundedImagination): the demonstrations' rehearse rows
 * again, each prompt showing its task's reference calls with their real responses as the grounded
 * GRPO rollouts show them (`--max-examples`), appended to the rows with ids of their own. A small
 * policy never reads examples it was not trained to read; the plain rows stay, since test-time
 * rehearsal has no reference to show.
 */
async function groundedRehearsals(ctx: TrainContext): Promise<void> {
  const { recipe, paths, settings } = ctx;
  const grounded = path.join(settings.work, 'tasks/demo-grounded');
  ctx.log(`  ${await groundTasks(paths.tasks.demo, grounded)}`);
  const out = path.join(settings.work, 'rows/demonstrations-grounded.jsonl');
  await exportDemonstrations(ctx, out, ['--roles', 'rehearse', '--tasks', grounded], {
    ...(recipe.rehearsePrompt as Record<string, unknown>),
    maxExamples: GROUNDED_MAX_EXAMPLES,
  });
  const lines = (await readFile(out, 'utf8')).split('\n').filter((l) => l.trim());
  const renamed = lines.map((l) => {
    const row = JSON.parse(l) as { id: string };
    return JSON.stringify({ ...row, id: `${row.id}/grounded` });
  });
  const plain = await readFile(paths.rows, 'utf8');
  await writeText(paths.rows, plain + renamed.map((l) => l + '\n').join(''));
  ctx.log(`  ${lines.length} grounded rehearse rows added to the demonstrations' rows`);
}

/** Plays `tasks` with the reference policy in shadow mode (real tools) into a fresh `runs`. */
async function playReference(tasks: string, runs: string): Promise<void> {
  await removeTree(runs);
  await rehearse('run', tasks, '--policy', 'reference', '--out', runs, '--no-progress');
}

/** Demonstrations by the reference policy and their rows; the copy probe's act rows. */
export async function demonstrationsStage(ctx: TrainContext): Promise<void> {
  const { recipe, paths, settings } = ctx;
  await playReference(paths.tasks.demo, paths.demoRuns);
  await exportDemonstrations(ctx, paths.rows);
  if (recipe.grpo.groundedImagination) await groundedRehearsals(ctx);
  if (!recipe.tasks.probe) return;
  const probeRuns = path.join(settings.work, 'runs/probe');
  await playReference(paths.tasks.probe, probeRuns);
  await rehearse(
    'export',
    probeRuns,
    '--out',
    paths.probeRows,
    '--only-successful',
    '--act-rows',
    'turn',
    '--roles',
    'act',
    '--rehearse-prompt',
    JSON.stringify(recipe.rehearsePrompt),
    ...slotArgs(recipe),
  );
}
