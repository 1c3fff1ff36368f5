// `npm run train:default`: builds the embedded default policy (models/default) from scratch, by the
// recipe in training/default/recipe.json: tasks of the built-in domains, demonstrations by the
// reference policy, a tokenizer and a model, SFT, role-wise GRPO on imagined rollouts played by the
// studio's runner, export, and an evaluation on the test split whose scores go into manifest.json.
// The training runs (SFT, GRPO) are run files in WORK, started through the lifecycle `rehearse train`
// and the editor use (dist/training.js: backend, port, launch.json, supervision, final export).
// Each stage is skipped when its output exists (the trainer itself resumes an interrupted run);
// `--fresh` starts over. Work files live in .rehearsal/training/default (gitignored).
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// RECIPE, WORK and MODEL can point elsewhere (a quick trial of the pipeline with a small recipe).
const RECIPE_FILE = path.resolve(
  process.env.RECIPE ?? path.join(ROOT, 'training/default/recipe.json'),
);
const WORK = path.resolve(process.env.WORK ?? path.join(ROOT, '.rehearsal/training/default'));
const MODEL = path.resolve(process.env.MODEL ?? path.join(ROOT, 'models/default'));
/** The ONNX files of an export that are in `dir`: the graph, its weights when stored apart (export.external_data), and model_cascade.onnx unless export.cascade was false. */
const onnxFiles = (dir) =>
  ['onnx/model.onnx', 'onnx/model.onnx_data', 'onnx/model_cascade.onnx'].filter((f) =>
    existsSync(path.join(dir, f)),
  );
const CLI = path.join(ROOT, 'dist/cli.js');
// The training-run lifecycle `rehearse train` and the editor start runs with (built by npm run build).
const TRAINING = path.join(ROOT, 'dist/training.js');
// The trainer's Python: $PYTHON, else as every launch picks it (scripts/trainer-python.sh).
const PYTHON =
  process.env.PYTHON ??
  execFileSync('bash', [path.join(ROOT, 'scripts/trainer-python.sh')], { encoding: 'utf8' }).trim();
const recipe = JSON.parse(await fs.readFile(RECIPE_FILE, 'utf8'));
const started = Date.now();
// The machine's load while this command runs (1-minute load average, sampled each minute), for the
// manifest: wall times mean little without what else shared the cores.
const loadSamples = [os.loadavg()[0]];
const loadTimer = setInterval(() => loadSamples.push(os.loadavg()[0]), 60_000);
loadTimer.unref();
const log = (msg) =>
  console.log(`[train:default ${((Date.now() - started) / 60000).toFixed(1)} min] ${msg}`);

/** Runs a program (argument vector, no shell); rejects with its last output when it fails. */
function run(cmd, args, { onLine, env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, PYTHONPATH: ROOT, OMP_WAIT_POLICY: 'PASSIVE', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail = [];
    const take = (stream, isOut) => {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop();
        for (const line of lines) {
          tail.push(line);
          if (tail.length > 30) tail.shift();
          if (isOut && onLine) onLine(line);
          else if (process.env.VERBOSE) console.error(line);
        }
      });
    };
    take(child.stdout, true);
    take(child.stderr, false);
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(
              `${path.basename(cmd)} ${args.slice(0, 3).join(' ')} exited ${code}:\n${tail.join('\n')}`,
            ),
          ),
    );
  });
}

/** A line of a trainer's stdout (tokenizer, init): its event as a progress line. */
function trainerLine(line) {
  let e;
  try {
    e = JSON.parse(line);
  } catch {
    return;
  }
  if (e && typeof e === 'object') trainerProgress(e);
}

/** Trainer events as progress lines. */
function trainerProgress(e) {
  if (e.event === 'step') {
    const roles = Object.entries(e.roles ?? {})
      .map(
        ([r, v]) =>
          `${r} ${(v.loss ?? v.pg_loss ?? 0).toFixed(3)}${v.reward_mean !== undefined ? ` r=${v.reward_mean.toFixed(2)}` : ''}`,
      )
      .join(', ');
    log(
      `  ${e.command} step ${e.step}${e.steps ? `/${e.steps}` : ''}${e.iteration !== undefined ? ` (iteration ${e.iteration + 1}/${e.iterations})` : ''}: loss ${Number(e.loss).toFixed(4)} [${roles}] ${Math.round(e.tokens_per_s ?? 0)} tok/s`,
    );
  } else if (e.event === 'rollouts') log(`  rollouts: ${JSON.stringify(e).slice(0, 200)}`);
  else if (e.event === 'probe')
    log(
      `  copy probe at step ${e.step}: ${Object.entries(e)
        .filter(([k, v]) => typeof v === 'number' && k !== 'step')
        .map(([k, v]) => `${k} ${Number(v).toFixed(2)}`)
        .join(', ')}`,
    );
  else if (e.event === 'validation')
    log(
      `  validation after ${e.iteration} iterations: ${Object.entries(e.scores)
        .map(([k, v]) => `${k} ${Number(v).toFixed(3)}`)
        .join(
          ', ',
        )} (best: iteration ${e.best_iteration}, ${e.metric} ${Number(e.best).toFixed(3)})`,
    );
  else if (e.event === 'best')
    log(
      `  final policy: the best validated point, after ${e.iteration} of ${e.iterations} iterations`,
    );
  else if (e.event === 'resume') log(`  resumed from step ${e.step} (${e.path})`);
  else if (e.event === 'warning') log(`  warning: ${e.code}: ${e.message}`);
  else if (e.event === 'error') log(`  error: ${e.code}: ${e.message}`);
}

const cli = (...args) =>
  run(process.execPath, [CLI, ...args], { onLine: (l) => process.env.VERBOSE && console.log(l) });
const trainer = (command, config) =>
  run(PYTHON, ['-m', 'trainer', command, '--config', config], { onLine: trainerLine });

/**
 * A training run (sft, grpo) from its run file, started as `rehearse train` and the editor start one
 * (dist/training.js): the backend from its hardware (torchrun, on a free port, for processes > 1),
 * launch.json, supervision, resume from the run folder's newest checkpoint, the final export.
 * `processes` > 1 adds `OPENBLAS_NUM_THREADS=1` (one rank per core; docs/default-policy.md measured
 * it). Ctrl-C cancels the trainer (its process group is its own). Rejects when the run fails.
 */
async function trainingRun(runFile, processes = 1) {
  const { prepareTrainingRun, startTrainingRun } = createRequire(import.meta.url)(TRAINING);
  const prepared = await prepareTrainingRun({
    runFile,
    options: {
      python: PYTHON,
      ...(processes > 1 ? { extraEnv: { OPENBLAS_NUM_THREADS: '1' } } : {}),
    },
  });
  if (process.env.VERBOSE) console.error(`$ ${prepared.command}`);
  const started = await startTrainingRun(prepared, {
    onProcess: (proc) => process.env.VERBOSE && proc.onLog((line) => console.error(line)),
  });
  started.process.onEvent(trainerProgress);
  const cancel = () => started.process.cancel();
  process.on('SIGINT', cancel);
  const { outcome, exportError } = await started.done.finally(() =>
    process.removeListener('SIGINT', cancel),
  );
  if (outcome.status !== 'done')
    throw new Error(
      `${path.basename(runFile)}: ${outcome.error?.code}: ${outcome.error?.message}\n${outcome.stderrTail}`,
    );
  if (exportError)
    throw new Error(`${path.basename(runFile)}: the final export failed: ${exportError}`);
}
// `--until <stage>` (tasks, demonstrations, tokenizer, init, sft, grpo, model) stops after that stage:
// e.g. `--until init` prepares everything SFT needs, to run SFT on another machine (a GPU one) with
// `python3 -m trainer sft --config <WORK>/sft-config.json` (its paths are relative to WORK), or with the
// studio there, `rehearse train --config <WORK>/sft.run.json`.
const untilArg = process.argv.indexOf('--until');
const UNTIL = untilArg > 0 ? process.argv[untilArg + 1] : undefined;
// Wall minutes of each stage, kept in WORK/stage-minutes.json across resumed runs (a stage that was
// interrupted and resumed adds up its parts), so the manifest can say what the whole build took.
const STAGE_MINUTES = path.join(WORK, 'stage-minutes.json');
const readStageMinutes = async () =>
  existsSync(STAGE_MINUTES) ? JSON.parse(await fs.readFile(STAGE_MINUTES, 'utf8')) : {};
const stage = async (name, marker, work) => {
  if (existsSync(marker)) log(`${name}: done before, skipped`);
  else {
    log(`${name}...`);
    const begun = Date.now();
    const add = async () => {
      const minutes = await readStageMinutes();
      const key = path.basename(marker, '.done');
      minutes[key] = Number(((minutes[key] ?? 0) + (Date.now() - begun) / 60000).toFixed(2));
      await fs.writeFile(STAGE_MINUTES, JSON.stringify(minutes, null, 2) + '\n');
    };
    try {
      await work();
    } finally {
      await add().catch(() => undefined);
    }
    await fs.writeFile(marker, new Date().toISOString() + '\n');
  }
  if (UNTIL && path.basename(marker) === `${UNTIL}.done`) {
    log(`stopped after ${UNTIL} (--until)`);
    process.exit(0);
  }
};
/** `{ copyProbe }`: the last `probe` event of a trainer's events file without its samples, or nothing. */
async function lastProbe(eventsFile) {
  if (!existsSync(eventsFile)) return {};
  let last;
  for (const line of (await fs.readFile(eventsFile, 'utf8')).split('\n')) {
    if (!line.includes('"probe"')) continue;
    try {
      const e = JSON.parse(line);
      if (e.event === 'probe') last = e;
    } catch {
      /* a torn last line */
    }
  }
  if (!last) return {};
  const { samples: _samples, event: _event, t: _t, ...figures } = last;
  return { copyProbe: figures };
}
const writeJson = (file, value) => fs.writeFile(file, JSON.stringify(value, null, 2) + '\n');
const sha256 = async (file) =>
  createHash('sha256')
    .update(await fs.readFile(file))
    .digest('hex');

async function main() {
  if (process.argv.includes('--fresh')) await fs.rm(WORK, { recursive: true, force: true });
  await fs.mkdir(WORK, { recursive: true });
  for (const built of [CLI, TRAINING])
    if (!existsSync(built))
      throw new Error(`${path.relative(ROOT, built)} is missing: run \`npm run build\` first.`);
  const { tasks: counts, domains } = recipe;
  const dirs = {
    demo: path.join(WORK, 'tasks/demonstrations'),
    grpo: path.join(WORK, 'tasks/grpo'),
    test: path.join(WORK, 'tasks/test'),
    probe: path.join(WORK, 'tasks/probe'),
    validation: path.join(WORK, 'tasks/validation'),
  };
  // Rows exported for this model: with identifier slots when the model reads them.
  const slotArgs = recipe.identifierSlots ? ['--identifier-slots'] : [];

  await stage(
    'tasks (train split: demonstrations + GRPO; test split)',
    path.join(WORK, 'tasks.done'),
    async () => {
      for (const domain of domains) {
        const all = path.join(WORK, 'tasks/all-train', domain);
        await cli(
          'generate',
          domain,
          '--split',
          'train',
          '--count',
          String(counts.demonstrations + counts.grpo),
          '--out',
          all,
        );
        const files = (await fs.readdir(all)).sort();
        for (const [i, f] of files.entries()) {
          const dest = i < counts.demonstrations ? dirs.demo : dirs.grpo;
          await fs.mkdir(path.join(dest, domain), { recursive: true });
          await fs.copyFile(path.join(all, f), path.join(dest, domain, f));
        }
        await cli(
          'generate',
          domain,
          '--split',
          'test',
          '--count',
          String(counts.test),
          '--out',
          path.join(dirs.test, domain),
        );
        // The copy probe's held-out tasks: the validation split, never the test split.
        if (counts.probe)
          await cli(
            'generate',
            domain,
            '--split',
            'validation',
            '--count',
            String(counts.probe),
            '--out',
            path.join(dirs.probe, domain),
          );
      }
    },
  );

  const demoRuns = path.join(WORK, 'runs/demonstrations');
  const rows = path.join(WORK, 'rows/demonstrations.jsonl');
  /** The demonstrations' training rows (one act row per episode), into `out`, with `extra` options. */
  const exportDemonstrations = (out, ...extra) =>
    cli(
      'export',
      demoRuns,
      '--out',
      out,
      // A recipe may keep the failed demonstrations (the GRPO sanity task's are half failures by design).
      ...(recipe.demonstrationsOnlySuccessful === false ? [] : ['--only-successful']),
      '--act-rows',
      'episode',
      '--rehearse-prompt',
      JSON.stringify(recipe.rehearsePrompt),
      ...slotArgs,
      ...extra,
    );
  const probeRows = path.join(WORK, 'rows/probe.jsonl');
  await stage(
    'demonstrations (reference policy, shadow mode, real tools)',
    path.join(WORK, 'demonstrations.done'),
    async () => {
      await fs.rm(demoRuns, { recursive: true, force: true });
      await cli('run', dirs.demo, '--policy', 'reference', '--out', demoRuns, '--no-progress');
      await exportDemonstrations(rows);
      if (counts.probe) {
        const probeRuns = path.join(WORK, 'runs/probe');
        await fs.rm(probeRuns, { recursive: true, force: true });
        await cli('run', dirs.probe, '--policy', 'reference', '--out', probeRuns, '--no-progress');
        await cli(
          'export',
          probeRuns,
          '--out',
          probeRows,
          '--only-successful',
          '--act-rows',
          'turn',
          '--roles',
          'act',
          '--rehearse-prompt',
          JSON.stringify(recipe.rehearsePrompt),
          ...slotArgs,
        );
      }
    },
  );

  // Trainer configs name paths relative to WORK (the trainer resolves them against the config's folder).
  const rel = (p) => path.relative(WORK, p);
  const policySettings = {
    rehearsePrompt: recipe.rehearsePrompt,
    maxTokens: recipe.maxTokens,
    ...(recipe.identifierSlots ? { identifierSlots: true } : {}),
  };
  /**
   * A run file in WORK (docs/training-runs.md): its paths relative to WORK, like the trainer configs';
   * `hyperparameters` go to the trainer config as they are.
   */
  const writeRunFile = async (
    name,
    { objective, base, outDir, train = [], threads, processes = 1, hyperparameters },
  ) => {
    const file = path.join(WORK, `${name}.run.json`);
    await writeJson(file, {
      name,
      objective,
      base: rel(base),
      out_dir: rel(outDir),
      seed: recipe.seed,
      ...(train.length ? { data: { train: train.map(rel) } } : {}),
      hardware: {
        ...(threads !== undefined ? { threads } : {}),
        ...(processes > 1 ? { processes } : {}),
      },
      hyperparameters,
    });
    return file;
  };
  const tok = path.join(WORK, 'tokenizer');
  await stage(
    'tokenizer (byte-level BPE on the demonstrations)',
    path.join(WORK, 'tokenizer.done'),
    async () => {
      const config = path.join(WORK, 'tokenizer.json');
      await writeJson(config, {
        seed: recipe.seed,
        out_dir: rel(tok),
        tokenizer: { row_files: [rel(rows)], ...recipe.tokenizer },
      });
      await trainer('tokenizer', config);
    },
  );

  const init = path.join(WORK, 'init');
  const sft = path.join(WORK, 'sft');
  // Written before the init stage, so that `--until init` leaves a complete SFT job that another machine
  // (a GPU one) can run from a copy of WORK's rows, tokenizer and configs: sft.run.json, which this
  // script starts, and the same job as the trainer's own config, sft-config.json, for a machine without
  // the studio (scripts/prepare-gpu-bench.sh copies it).
  const sftConfig = path.join(WORK, 'sft-config.json');
  const { threads: sftThreads, processes: sftProcesses = 1, probe, ...sftRest } = recipe.sft;
  const sftHyperparameters = {
    ...sftRest,
    train: { ...sftRest.train, export_at_end: true },
    ...(probe && counts.probe ? { probe: { ...probe, rows: [rel(probeRows)] } } : {}),
  };
  await writeJson(sftConfig, {
    seed: recipe.seed,
    threads: sftThreads,
    out_dir: rel(sft),
    model: { path: rel(init) },
    ...sftHyperparameters,
    data: { ...sftRest.data, train: [rel(rows)] },
  });
  const sftRun = await writeRunFile('sft', {
    objective: 'sft',
    base: init,
    outDir: sft,
    train: [rows],
    threads: sftThreads,
    processes: sftProcesses,
    hyperparameters: sftHyperparameters,
  });
  await stage('model (random initialisation)', path.join(WORK, 'init.done'), async () => {
    const config = path.join(WORK, 'init-config.json');
    await writeJson(config, {
      seed: recipe.seed,
      out_dir: rel(init),
      model: { tokenizer: rel(tok), architecture: recipe.architecture },
    });
    await trainer('init', config);
  });

  // How the policy is prompted (its rehearse prompt, token limits, identifier slots) travels with its
  // tokenizer through init, SFT and GRPO (the trainer copies rehearsal_config.json along): GRPO's
  // rollouts then prompt each exported checkpoint as the final policy will be prompted.
  for (const dir of [tok, init, path.join(sft, 'tokenizer')])
    if (existsSync(dir)) await writeJson(path.join(dir, 'rehearsal_config.json'), policySettings);
  await stage(
    'SFT on the demonstrations (act and rehearse roles)',
    path.join(WORK, 'sft.done'),
    () => trainingRun(sftRun, sftProcesses),
  );

  // Private rehearsal the policy was trained for (recipe.memory): the SFT policy rehearses privately on
  // some of the demonstration tasks (imagined attempts, then the memory its committed episode reads);
  // the demonstrations of those tasks are exported again with each memory in their prompt, and SFT
  // continues on all the demonstrations plus those, so that the memory prompt is not new at test time.
  const memorySft = path.join(WORK, 'sft-memory');
  if (recipe.memory) {
    const {
      tasks: memoryTasks,
      budget,
      order,
      temperature: memoryTemperature,
      sft: mSft,
    } = recipe.memory;
    const memoryDir = path.join(WORK, 'tasks/memory');
    const memoryRuns = path.join(WORK, 'runs/memory');
    const memoryRows = path.join(WORK, 'rows/memory.jsonl');
    await stage(
      'private rehearsal by the SFT policy (memories on demonstration tasks)',
      path.join(WORK, 'memories.done'),
      async () => {
        await fs.rm(memoryDir, { recursive: true, force: true });
        for (const domain of domains) {
          const files = (await fs.readdir(path.join(dirs.demo, domain))).sort();
          await fs.mkdir(path.join(memoryDir, domain), { recursive: true });
          for (const f of files.slice(0, memoryTasks))
            await fs.copyFile(path.join(dirs.demo, domain, f), path.join(memoryDir, domain, f));
        }
        await fs.rm(memoryRuns, { recursive: true, force: true });
        await cli(
          'run',
          memoryDir,
          '--policy',
          path.join(sft, 'final'),
          '--mode',
          'private',
          '--budget',
          String(budget),
          '--order',
          order,
          '--rehearsal-temperature',
          String(memoryTemperature),
          '--seed',
          String(recipe.seed),
          '--out',
          memoryRuns,
          '--no-progress',
        );
        await exportDemonstrations(memoryRows, '--roles', 'act', '--memory-from', memoryRuns);
        // Only the rows read with a memory: the plain demonstrations are in the SFT rows already.
        const lines = (await fs.readFile(memoryRows, 'utf8')).split('\n').filter(Boolean);
        const kept = lines.filter((l) => /\/memory-\d+$/.test(JSON.parse(l).id));
        if (!kept.length)
          throw new Error(`no demonstration was exported with a memory (${memoryRuns})`);
        await fs.writeFile(memoryRows, kept.join('\n') + '\n');
        log(`  ${kept.length} demonstration rows read with a rehearsal memory`);
      },
    );
    await stage(
      'SFT with rehearsal memories (continued from the SFT policy)',
      path.join(WORK, 'sft-memory.done'),
      async () => {
        const runFile = await writeRunFile('sft-memory', {
          objective: 'sft',
          base: path.join(sft, 'final'),
          outDir: memorySft,
          train: [rows, memoryRows],
          threads: sftThreads,
          processes: sftProcesses,
          hyperparameters: {
            ...sftRest,
            ...mSft,
            data: sftRest.data,
            train: { ...sftRest.train, ...mSft.train, export_at_end: true },
          },
        });
        await trainingRun(runFile, sftProcesses);
      },
    );
  }
  // GRPO starts from the last SFT.
  const sftFinal = path.join(recipe.memory ? memorySft : sft, 'final');

  const grpo = path.join(WORK, 'grpo');
  await stage(
    'GRPO with world rehearsal (imagined rollouts by the studio runner)',
    path.join(WORK, 'grpo.done'),
    async () => {
      const {
        threads,
        episodes,
        temperature,
        actRows = 'episode',
        validation,
        tasksPerIteration,
        ...rest
      } = recipe.grpo;
      // Held-out validation while GRPO trains (recipe.grpo.validation): the validation split, never
      // the test split; the final policy is the best validated point's.
      if (validation) {
        await fs.rm(dirs.validation, { recursive: true, force: true });
        for (const domain of domains)
          await cli(
            'generate',
            domain,
            '--split',
            'validation',
            '--count',
            String(validation.tasks),
            '--out',
            path.join(dirs.validation, domain),
          );
      }
      const hyperparameters = {
        ...rest,
        grpo: { ...rest.grpo, temperature },
        ...(validation
          ? {
              validation: {
                every: validation.every,
                metric: 'success',
                tie_metric: 'meanReward',
                keep_best: true,
                command: [
                  process.execPath,
                  path.join(ROOT, 'scripts/validate-policy.mjs'),
                  dirs.validation,
                  '{model_dir}',
                  '{out}',
                  '{run_dir}/validation-runs/iter{iteration}',
                ],
              },
            }
          : {}),
        train: { ...rest.train, export_at_end: true },
        rollouts: {
          command: [
            process.execPath,
            CLI,
            'rollout',
            dirs.grpo,
            '--policy',
            '{model_dir}',
            '--out',
            '{out}',
            '--episodes',
            String(episodes),
            '--temperature',
            String(temperature),
            '--seed',
            '{seed}',
            '--group',
            'iter{iteration}',
            '--runs',
            '{run_dir}/rollout-runs',
            // One act row per episode (train_history), as the default recipe was tuned, unless the recipe says `turn`.
            '--act-rows',
            actRows,
            // A new batch of the GRPO tasks each iteration, when the recipe says how many.
            ...(tasksPerIteration
              ? ['--batch-size', String(tasksPerIteration), '--batch', '{iteration}']
              : []),
          ],
        },
      };
      const runFile = await writeRunFile('grpo', {
        objective: 'grpo',
        base: sftFinal,
        outDir: grpo,
        threads,
        hyperparameters,
      });
      await trainingRun(runFile);
    },
  );

  await stage(
    `the policy folder ${MODEL.startsWith(ROOT + path.sep) ? path.relative(ROOT, MODEL) : MODEL}`,
    path.join(WORK, 'model.done'),
    async () => {
      const final = path.join(grpo, 'final');
      await fs.rm(MODEL, { recursive: true, force: true });
      await fs.mkdir(path.join(MODEL, 'onnx'), { recursive: true });
      for (const f of [
        'config.json',
        'generation_config.json',
        'tokenizer.json',
        'tokenizer_config.json',
      ])
        await fs.copyFile(path.join(final, f), path.join(MODEL, f));
      // model_cascade.onnx: the graph the policy host decodes n rehearsal samples with (one copy of the prompt's cache).
      for (const f of onnxFiles(final)) await fs.copyFile(path.join(final, f), path.join(MODEL, f));
      await writeJson(path.join(MODEL, 'rehearsal_config.json'), policySettings);
    },
  );

  await stage(
    'evaluation on the test split (shadow mode, real tools)',
    path.join(WORK, 'eval.done'),
    async () => {
      const evalRuns = path.join(WORK, 'runs/eval');
      await fs.rm(evalRuns, { recursive: true, force: true });
      let out = '';
      await run(
        process.execPath,
        [CLI, 'run', dirs.test, '--policy', MODEL, '--out', evalRuns, '--no-progress', '--json'],
        {
          onLine: (l) => {
            out += l + '\n';
          },
        },
      );
      const { run: summary, report } = JSON.parse(out);
      const files = {};
      for (const f of [
        'config.json',
        'generation_config.json',
        'tokenizer.json',
        'tokenizer_config.json',
        'rehearsal_config.json',
        ...onnxFiles(MODEL),
      ])
        files[f] = await sha256(path.join(MODEL, f));
      const o = report.overall;
      await writeJson(path.join(MODEL, 'manifest.json'), {
        name: 'rehearsal-studio-default',
        description: recipe.description,
        command: 'npm run train:default',
        recipe,
        data: {
          demonstrations: { tasksPerDomain: counts.demonstrations, rows: await sha256(rows) },
          grpo: { tasksPerDomain: counts.grpo },
          test: { tasksPerDomain: counts.test, split: 'test (seed % 10 == 9)' },
        },
        files,
        scores: {
          split: 'test',
          mode: 'shadow',
          episodes: report.episodes,
          taskSuccess: report.graded ? report.successes / report.graded : null,
          meanReward: report.meanReward,
          toolCallParseValidity: report.turns ? report.actParseValid / report.turns : null,
          rehearsalJsonValidity: report.rehearsed
            ? report.rehearsalParseValid / report.rehearsed
            : null,
          fidelity: {
            compared: o.compared,
            exactMatch: o.exactMatch,
            fieldF1: o.fieldF1,
            keyJaccard: o.keyJaccard,
            typeAgreement: o.typeAgreement,
            errorAgreement: o.errorAgreement,
          },
          perTool: report.perTool,
          parseErrors: report.parseErrors,
          runStatus: summary.status,
        },
        // SFT's last copy probe (held-out validation-split act rows, greedy): did the policy learn to copy?
        ...(await lastProbe(path.join(sft, 'events.jsonl'))),
        trainedMinutes: Math.round((Date.now() - started) / 60000),
        // Every stage's wall minutes over all the runs that built this policy (resumed ones included;
        // the evaluation's own minutes are added on its next run), and their sum.
        ...(await (async () => {
          const m = await readStageMinutes();
          return {
            stageMinutes: m,
            wallMinutes: Number(
              Object.values(m)
                .reduce((a, b) => a + b, 0)
                .toFixed(1),
            ),
          };
        })()),
        // This command's own run (a resumed run counts from its restart; earlier stages were skipped).
        machine: {
          cpus: os.cpus().length,
          cpuModel: os.cpus()[0]?.model,
          memoryGiB: Math.round(os.totalmem() / 2 ** 30),
          node: process.version,
          load1m: {
            mean: Number((loadSamples.reduce((a, b) => a + b, 0) / loadSamples.length).toFixed(2)),
            max: Number(Math.max(...loadSamples).toFixed(2)),
            samples: loadSamples.length,
          },
        },
        // How this particular run was pieced together, when it was not one uninterrupted local run
        // (WORK/history.txt, written by whoever moved a stage elsewhere, e.g. SFT to a GPU machine).
        ...(existsSync(path.join(WORK, 'history.txt'))
          ? { history: (await fs.readFile(path.join(WORK, 'history.txt'), 'utf8')).trim() }
          : {}),
      });
      log(
        `scores: ${JSON.stringify(JSON.parse(await fs.readFile(path.join(MODEL, 'manifest.json'), 'utf8')).scores).slice(0, 400)}`,
      );
    },
  );
  log(`done: ${MODEL.startsWith(ROOT + path.sep) ? path.relative(ROOT, MODEL) : MODEL}`);
}

main().catch((err) => {
  console.error(`train:default failed: ${err.message}`);
  process.exit(1);
});
