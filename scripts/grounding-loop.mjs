// `npm run measure:grounding`: the loop of issue 7, measured on the built-in domains with the CLI a user
// has. The default policy plays tasks of the test split in shadow mode (real tools); every call whose
// rehearsal missed is marked as a fidelity error (`rehearse annotate --mismatches`, what a person would
// mark one by one in the editor); the tasks are split in two by task: the first part's marked calls
// become grounding rows (the rehearse prompt with the actual response as target, weighted by the
// marks), `rehearse train` fine-tunes the default policy on them for a few steps, and `rehearse compare
// --only-marked` replays the held-out part's marked calls with the old and the new policy.
// Work files: .rehearsal/grounding-loop (gitignored); `--fresh` starts over. Prints the comparison.
import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WORK = path.resolve(process.env.WORK ?? path.join(ROOT, '.rehearsal/grounding-loop'));
const CLI = path.join(ROOT, 'dist/cli.js');
const BASE = path.join(ROOT, 'models/default');
const TASKS_PER_DOMAIN = Number(process.env.TASKS ?? 24);
const HELD_OUT = 1 / 3;
const STEPS = Number(process.env.STEPS ?? 40);
const started = Date.now();
const log = (msg) =>
  console.log(`[grounding ${((Date.now() - started) / 60000).toFixed(1)} min] ${msg}`);

/** Runs the CLI (argument vector, no shell); resolves with its stdout, rejects with its output on failure. */
function rehearse(...args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(out)
        : reject(
            new Error(
              `rehearse ${args.slice(0, 2).join(' ')} exited ${code}:\n${(err || out).slice(-3000)}`,
            ),
          ),
    );
  });
}

/** Plays a folder of tasks with the default policy (once; the trace is reused on later runs of this script). */
async function play(name, tasks) {
  const marker = path.join(WORK, `${name}.trace`);
  if (existsSync(marker)) return (await fs.readFile(marker, 'utf8')).trim();
  const out = await rehearse(
    'run',
    tasks,
    '--policy',
    BASE,
    '--out',
    path.join(WORK, 'runs'),
    '--no-progress',
    '--device',
    'cpu',
  );
  const trace = out
    .split('\n')
    .find((l) => l.startsWith('trace: '))
    .slice('trace: '.length);
  await fs.writeFile(marker, trace + '\n');
  return trace;
}

async function main() {
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first.');
  if (process.argv.includes('--fresh')) await fs.rm(WORK, { recursive: true, force: true });
  await fs.mkdir(WORK, { recursive: true });

  log(`tasks: ${TASKS_PER_DOMAIN} per domain of the test split, the last third of each held out`);
  for (const domain of ['retail', 'bank']) {
    const all = path.join(WORK, 'tasks/all', domain);
    if (!existsSync(all))
      await rehearse(
        'generate',
        domain,
        '--split',
        'test',
        '--count',
        String(TASKS_PER_DOMAIN),
        '--out',
        all,
      );
    const files = (await fs.readdir(all)).sort();
    const cut = Math.round(files.length * (1 - HELD_OUT));
    for (const [i, f] of files.entries()) {
      const dest = path.join(WORK, i < cut ? 'tasks/train' : 'tasks/heldout', domain);
      await fs.mkdir(dest, { recursive: true });
      await fs.copyFile(path.join(all, f), path.join(dest, f));
    }
  }

  log('the default policy plays both parts in shadow mode (real tools)');
  const trainTrace = await play('train', path.join(WORK, 'tasks/train'));
  const heldoutTrace = await play('heldout', path.join(WORK, 'tasks/heldout'));

  log('marking every missed rehearsal as a fidelity error');
  for (const trace of [trainTrace, heldoutTrace])
    log(
      `  ${(await rehearse('annotate', trace, '--mismatches', '--author', 'grounding-loop')).split('\n')[0]} (${path.basename(path.dirname(trace))})`,
    );

  const rows = path.join(WORK, 'grounding.jsonl');
  log(
    `grounding rows from the first part's traces: ${(await rehearse('export', trainTrace, '--out', rows, '--roles', 'rehearse', '--rehearse-prompt', await rehearsePromptOf(BASE))).trim().split('\n').at(-1)}`,
  );

  const runFile = path.join(WORK, 'grounding.run.json');
  await fs.writeFile(
    runFile,
    JSON.stringify(
      {
        name: 'grounding-loop',
        objective: 'sft',
        base: BASE,
        data: { train: [rows] },
        out_dir: path.join(WORK, 'train'),
        seed: 0,
        hyperparameters: {
          optim: { lr: 0.0005, schedule: 'constant', warmup_steps: 0 },
          train: {
            steps: STEPS,
            batch_size: 8,
            micro_batch_size: 4,
            checkpoint_every: 10,
            export_at_end: true,
          },
          data: { max_length: 3072 },
        },
        hardware: { device: 'auto', threads: 2 },
      },
      null,
      2,
    ) + '\n',
  );
  log(
    `rehearse train --config ${path.relative(ROOT, runFile)} (${STEPS} steps of sft on the grounding rows)`,
  );
  const train = JSON.parse(await rehearse('train', '--config', runFile, '--json'));
  log(`  ${train.outcome?.status ?? JSON.stringify(train).slice(0, 200)}`);
  const trained = path.join(WORK, 'train/final');

  log('rehearse compare <held-out trace> --policy default --policy trained --only-marked');
  const json = JSON.parse(
    await rehearse(
      'compare',
      heldoutTrace,
      '--policy',
      BASE,
      '--policy',
      trained,
      '--only-marked',
      '--out',
      path.join(WORK, 'replays'),
      '--no-progress',
      '--device',
      'cpu',
      '--json',
    ),
  );
  await fs.writeFile(path.join(WORK, 'compare.json'), JSON.stringify(json, null, 2) + '\n');
  const f = (v) => (v === null ? '-' : v.toFixed(2));
  const cell = (d) => `${f(d.a)}→${f(d.b)}`;
  console.log(
    `held-out marked calls: ${json.onlyMarked}\ntool                  calls  valid JSON   exact       field F1    key Jaccard  type        error state`,
  );
  for (const r of [...json.comparison.perTool, json.comparison.overall]) {
    const s = r.scores;
    console.log(
      `${r.tool.padEnd(22)}${String(r.calls).padStart(5)}  ${[r.validity, s.exactMatch, s.fieldF1, s.keyJaccard, s.typeAgreement, s.errorAgreement].map((d) => cell(d).padEnd(11)).join(' ')}`,
    );
  }
  log(`done: ${path.relative(ROOT, path.join(WORK, 'compare.json'))}`);
}

/** The rehearse prompt layout the policy was trained with (its rehearsal_config.json), as export's --rehearse-prompt wants it. */
async function rehearsePromptOf(model) {
  const file = path.join(model, 'rehearsal_config.json');
  return existsSync(file)
    ? JSON.stringify(JSON.parse(await fs.readFile(file, 'utf8')).rehearsePrompt ?? {})
    : '{}';
}

main().catch((err) => {
  console.error(`grounding loop failed: ${err.message}`);
  process.exit(1);
});
