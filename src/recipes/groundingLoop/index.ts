import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { copyInto, makeDir, readJsonOr, removeTree, writeJson, writeText } from '../shared/files';
import type { ProgressLog } from '../shared/log';
import { progressLog } from '../shared/log';
import { ROOT, rehearse, requireCli } from '../shared/studio';
import { fromEnv } from '../trainDefault/settings';
import type { Comparison } from './table';
import { comparisonTable, groundingRunFile, splitHeldOut } from './table';
import { say } from '../shared/terminal';

/** Where the grounding loop works and at what size (`WORK`, `TASKS`, `STEPS`). */
export interface GroundingSettings {
  work: string;
  base: string;
  tasksPerDomain: number;
  steps: number;
  fresh: boolean;
}

/** The settings from the environment and arguments. */
export function groundingSettings(
  env: Record<string, string | undefined>,
  argv: readonly string[],
  root: string,
): GroundingSettings {
  return {
    work: fromEnv(env.WORK, root, '.rehearsal/grounding-loop'),
    base: path.join(root, 'models/default'),
    tasksPerDomain: Number(env.TASKS ?? 24),
    steps: Number(env.STEPS ?? 40),
    fresh: argv.includes('--fresh'),
  };
}

/** Test-split tasks per domain (once), split by task into a training part and a held-out part. */
async function tasks(s: GroundingSettings): Promise<void> {
  for (const domain of ['retail', 'bank']) {
    const all = path.join(s.work, 'tasks/all', domain);
    if (!existsSync(all))
      await rehearse(
        'generate',
        domain,
        '--split',
        'test',
        '--count',
        String(s.tasksPerDomain),
        '--out',
        all,
      );
    const files = (await readdir(all)).sort();
    for (const [i, f] of files.entries()) {
      const part = splitHeldOut(i, files.length) ? 'tasks/heldout' : 'tasks/train';
      await copyInto(path.join(all, f), path.join(s.work, part, domain, f));
    }
  }
}

/** Plays a folder of tasks with the default policy (once; the trace is reused on later runs). */
async function play(s: GroundingSettings, name: string, taskDir: string): Promise<string> {
  const marker = path.join(s.work, `${name}.trace`);
  if (existsSync(marker)) return (await readFile(marker, 'utf8')).trim();
  const runs = path.join(s.work, 'runs');
  const out = await rehearse(
    'run',
    taskDir,
    '--policy',
    s.base,
    '--out',
    runs,
    '--no-progress',
    '--device',
    'cpu',
  );
  const line = out.split('\n').find((l) => l.startsWith('trace: '));
  if (!line) throw new Error(`rehearse run printed no trace line:\n${out.slice(-2000)}`);
  const trace = line.slice('trace: '.length);
  await writeText(marker, trace + '\n');
  return trace;
}

/** The rehearse prompt layout the policy was trained with, as export's --rehearse-prompt wants it. */
async function rehearsePromptOf(model: string): Promise<string> {
  const config = await readJsonOr<{ rehearsePrompt?: unknown }>(
    path.join(model, 'rehearsal_config.json'),
    {},
  );
  return JSON.stringify(config.rehearsePrompt ?? {});
}

/** Marks every missed rehearsal, exports the first part's grounding rows and fine-tunes on them. */
async function ground(s: GroundingSettings, log: ProgressLog, traces: string[]): Promise<string> {
  log('marking every missed rehearsal as a fidelity error');
  for (const trace of traces) {
    const out = await rehearse('annotate', trace, '--mismatches', '--author', 'grounding-loop');
    log(`  ${out.split('\n')[0]} (${path.basename(path.dirname(trace))})`);
  }
  const rows = path.join(s.work, 'grounding.jsonl');
  const prompt = await rehearsePromptOf(s.base);
  const exported = await rehearse(
    'export',
    traces[0],
    '--out',
    rows,
    '--roles',
    'rehearse',
    '--rehearse-prompt',
    prompt,
  );
  log(`grounding rows from the first part's traces: ${exported.trim().split('\n').at(-1)}`);
  const runFile = path.join(s.work, 'grounding.run.json');
  await writeJson(runFile, groundingRunFile(s.base, rows, path.join(s.work, 'train'), s.steps));
  log(
    `rehearse train --config ${path.relative(ROOT, runFile)} (${s.steps} steps of sft on the grounding rows)`,
  );
  const train = JSON.parse(await rehearse('train', '--config', runFile, '--json')) as {
    outcome?: { status: string };
  };
  log(`  ${train.outcome?.status ?? JSON.stringify(train).slice(0, 200)}`);
  return path.join(s.work, 'train/final');
}

/**
 * `npm run measure:grounding`: the loop of issue 7, measured on the built-in domains with the CLI a
 * user has. The default policy plays test-split tasks in shadow mode; every call whose rehearsal
 * missed is marked as a fidelity error (`rehearse annotate --mismatches`); the first part's marked
 * calls become grounding rows, `rehearse train` fine-tunes the default policy on them, and
 * `rehearse compare --only-marked` replays the held-out part's marked calls with the old and the new
 * policy. Work files: .rehearsal/grounding-loop; `--fresh` starts over. Prints the comparison.
 */
export async function groundingLoop(s: GroundingSettings, log = progressLog('grounding')) {
  requireCli();
  if (s.fresh) await removeTree(s.work);
  await makeDir(s.work);
  log(`tasks: ${s.tasksPerDomain} per domain of the test split, the last third of each held out`);
  await tasks(s);
  log('the default policy plays both parts in shadow mode (real tools)');
  const trainTrace = await play(s, 'train', path.join(s.work, 'tasks/train'));
  const heldoutTrace = await play(s, 'heldout', path.join(s.work, 'tasks/heldout'));
  const trained = await ground(s, log, [trainTrace, heldoutTrace]);
  log('rehearse compare <held-out trace> --policy default --policy trained --only-marked');
  const json = JSON.parse(
    await rehearse(
      ...['compare', heldoutTrace, '--policy', s.base, '--policy', trained, '--only-marked'],
      ...['--out', path.join(s.work, 'replays'), '--no-progress', '--device', 'cpu', '--json'],
    ),
  ) as Comparison;
  await writeJson(path.join(s.work, 'compare.json'), json);
  say(comparisonTable(json));
  log(`done: ${path.relative(ROOT, path.join(s.work, 'compare.json'))}`);
}
