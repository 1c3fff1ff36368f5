// `npm run measure:envace`: EnvACE's two effects, measured with the studio's own CLI and trainer on
// held-out tasks (test-split seeds that no recipe uses), shadow mode against the real servers, greedy.
//  A. World rehearsal helps policy learning: from one starting policy (BASE) and the same compute
//     (GRPO iterations, tasks, episodes per group), GRPO on imagined rollouts (the policy rehearses
//     the tools) vs GRPO on real tool rollouts (the environment-interaction baseline) vs no GRPO:
//     held-out task success, mean reward and rehearsal fidelity, per training seed.
//  B. Private rehearsal helps at test time: the committed policy (POLICY) with budget 0, 2 and 4,
//     parallel and sequential (imagined episodes sampled at REHEARSAL_TEMPERATURE, a seed each).
//  C. The committed policy's own GRPO (train:default's scale, one training seed): POLICY vs the point
//     its GRPO started from (RECIPE_START: .rehearsal/training/default/sft-memory/final, else sft/final),
//     and vs the SFT (BASE); only when that work folder is there.
// 95% intervals: bootstrap over held-out tasks (2,000 resamples, seeded); the differences between arms
// (imagined - none, imagined - real, budget 2 - budget 0, ...) are paired: each task's difference of
// its seed-averaged values, resampled over tasks. Each arm's compute is counted: GRPO episodes and the
// real tool calls they made (world rehearsal's arm makes none). No setting is tuned on the held-out
// tasks. `--publish` also writes the differences to docs/envace-effects.json. Work files: .rehearsal/measure-envace (gitignored): every finished step is kept and
// skipped when the command runs again (`--fresh` starts over). Writes results.json and results.md there.
// QUICK=1: the tiny version CI runs (seconds per stage, numbers meaningless). Settings: the env names
// below (BASE, POLICY, SEEDS, ITERATIONS, EPISODES, GRPO_TASKS, HELDOUT, BUDGETS, RECIPE, WORK...).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const QUICK = process.env.QUICK === '1';
const env = (name, full, quick) => process.env[name] ?? (QUICK ? quick : full);
const WORK = path.resolve(
  env(
    'WORK',
    path.join(ROOT, '.rehearsal/measure-envace'),
    path.join(ROOT, '.rehearsal/measure-envace-quick'),
  ),
);
const CLI = path.join(ROOT, 'dist/cli.js');
// The trainer's Python: $PYTHON, else as every launch picks it (scripts/trainer-python.sh).
const PYTHON =
  process.env.PYTHON ??
  execFileSync('bash', [path.join(ROOT, 'scripts/trainer-python.sh')], { encoding: 'utf8' }).trim();
// The GRPO settings (threads, optimiser, clip, episodes' temperature) are the default policy's recipe's.
const RECIPE = JSON.parse(
  await fs.readFile(
    path.resolve(process.env.RECIPE ?? path.join(ROOT, 'training/default/recipe.json')),
    'utf8',
  ),
);
const POLICY = path.resolve(
  env('POLICY', path.join(ROOT, 'models/default'), path.join(ROOT, 'models/default')),
);
const sftFinal = path.join(ROOT, '.rehearsal/training/default/sft/final');
const BASE = path.resolve(
  env('BASE', existsSync(path.join(sftFinal, 'config.json')) ? sftFinal : POLICY, POLICY),
);
// C: where the committed policy's own GRPO (the recipe's scale, one training seed) started: the SFT
// with private-rehearsal memories when the recipe has that stage, else the SFT. Unset when missing.
const recipeStart = ['sft-memory', 'sft']
  .map((stage) => path.join(ROOT, '.rehearsal/training/default', stage, 'final'))
  .find((dir) => existsSync(path.join(dir, 'config.json')));
const RECIPE_START = process.env.RECIPE_START ?? (QUICK ? undefined : recipeStart);
// Three training seeds (and three private-rehearsal seeds), 100 held-out tasks per domain by default.
const SEEDS = env('SEEDS', '0,1,2', '0').split(',').map(Number);
const ITERATIONS = Number(env('ITERATIONS', '2', '1'));
const EPISODES = Number(env('EPISODES', String(RECIPE.grpo.episodes), '2'));
const GRPO_TASKS = Number(env('GRPO_TASKS', '6', '1'));
const HELDOUT = Number(env('HELDOUT', '100', '1'));
const BUDGETS = env('BUDGETS', '2,4', '1').split(',').map(Number);
const PRIVATE_SEEDS = env('PRIVATE_SEEDS', SEEDS.join(','), '0').split(',').map(Number);
const REHEARSAL_TEMPERATURE = Number(env('REHEARSAL_TEMPERATURE', '0.8', '0.8'));
// Seeds no recipe of this repository uses: train:default takes the first train-split and test-split seeds.
const GRPO_START = 20_000;
const HELDOUT_START = 30_000;
const DOMAINS = ['retail', 'bank'];
const started = Date.now();
const log = (msg) =>
  console.log(`[measure:envace ${((Date.now() - started) / 60000).toFixed(1)} min] ${msg}`);

/** Runs a program (argument vector, no shell); resolves with its stdout, rejects with its output's tail. */
function run(cmd, args, { onLine } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, PYTHONPATH: ROOT, OMP_WAIT_POLICY: 'PASSIVE' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      if (onLine) for (const l of d.split('\n')) if (l) onLine(l);
    });
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-4000);
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(out)
        : reject(
            new Error(
              `${path.basename(cmd)} ${args.slice(0, 3).join(' ')} exited ${code}:\n${err || out.slice(-3000)}`,
            ),
          ),
    );
  });
}
const rehearse = (...args) => run(process.execPath, [CLI, ...args]);

/** A step that is done once: its result is kept in WORK/<name>.json and read back on later runs. */
async function step(name, work) {
  const file = path.join(WORK, `${name}.json`);
  if (existsSync(file)) {
    log(`${name}: done before`);
    return JSON.parse(await fs.readFile(file, 'utf8'));
  }
  log(`${name}...`);
  const t0 = Date.now();
  const result = { ...(await work()), seconds: Math.round((Date.now() - t0) / 1000) };
  await fs.writeFile(file, JSON.stringify(result, null, 2) + '\n');
  return result;
}

/** Per-task outcomes of one evaluation run (`rehearse run --json`), and its report's figures. */
async function evaluate(name, policy, runArgs = []) {
  return step(name, async () => {
    const out = await rehearse(
      'run',
      path.join(WORK, 'tasks/heldout'),
      '--policy',
      policy,
      '--out',
      path.join(WORK, 'runs', name),
      '--no-progress',
      '--json',
      ...runArgs,
    );
    const { run: summary, report } = JSON.parse(out);
    const calls =
      JSON.parse(await rehearse('report', summary.traceFile, '--calls', '--json')).callList ?? [];
    return {
      trace: summary.traceFile,
      tasks: summary.episodes.map((e) => ({
        task: e.taskId,
        success: e.success ? 1 : 0,
        reward: e.reward ?? 0,
      })),
      fieldF1: calls.filter((c) => c.fieldF1 !== null).map((c) => c.fieldF1),
      keyJaccard: report.overall.keyJaccard,
      rehearsalValidity: report.rehearsed ? report.rehearsalParseValid / report.rehearsed : null,
      actValidity: report.turns ? report.actParseValid / report.turns : null,
    };
  });
}

/** GRPO from BASE with rollouts played by the studio's runner: imagined (`rollout`) or real (`rollout --real`). */
async function grpo(arm, seed) {
  const out = path.join(WORK, 'grpo', `${arm}-seed${seed}`);
  const final = path.join(out, 'final');
  await step(`grpo-${arm}-seed${seed}`, async () => {
    // The recipe's own rollout plan (its validation, batches, act rows) is train:default's, not this
    // comparison's: every arm plays the same GRPO tasks each iteration, without validation.
    const {
      threads,
      episodes: _e,
      temperature,
      validation: _v,
      tasksPerIteration: _t,
      actRows: _a,
      ...rest
    } = RECIPE.grpo;
    const config = path.join(WORK, `grpo-${arm}-seed${seed}.config.json`);
    await fs.writeFile(
      config,
      JSON.stringify(
        {
          seed,
          threads,
          out_dir: out,
          model: { path: BASE },
          ...rest,
          grpo: { ...rest.grpo, iterations: ITERATIONS, temperature },
          train: { ...rest.train, export_at_end: true },
          rollouts: {
            command: [
              process.execPath,
              CLI,
              'rollout',
              path.join(WORK, 'tasks/grpo'),
              '--policy',
              '{model_dir}',
              '--out',
              '{out}',
              '--episodes',
              String(EPISODES),
              '--temperature',
              String(temperature),
              '--seed',
              '{seed}',
              '--group',
              'iter{iteration}',
              '--runs',
              '{run_dir}/rollout-runs',
              // The published figures were measured with one act row per episode; rollout's default is now per turn.
              '--act-rows',
              'episode',
              ...(arm === 'real' ? ['--real'] : []),
            ],
          },
        },
        null,
        2,
      ),
    );
    const rewards = [];
    await run(PYTHON, ['-m', 'trainer', 'grpo', '--config', config], {
      onLine: (line) => {
        try {
          const e = JSON.parse(line);
          if (e.event === 'rollouts' && e.roles?.act) {
            rewards.push(e.roles.act.reward_mean);
            log(
              `  ${arm} seed ${seed}: rollouts of iteration ${(e.iteration ?? rewards.length - 1) + 1}, act reward mean ${Number(e.roles.act.reward_mean).toFixed(3)}`,
            );
          }
          if (e.event === 'resume') log(`  ${arm} seed ${seed}: resumed from step ${e.step}`);
          if (e.event === 'error') log(`  trainer error: ${e.code}: ${e.message}`);
        } catch {
          /* a log line */
        }
      },
    });
    return {
      rolloutRewardMeans: rewards,
      ...(await rolloutCompute(path.join(out, 'rollout-runs'))),
    };
  });
  return final;
}

/** What a GRPO arm's rollouts cost: episodes played and real tool calls made (trace events). */
async function rolloutCompute(runsDir) {
  let episodes = 0;
  let realToolCalls = 0;
  if (!existsSync(runsDir)) return { episodes, realToolCalls };
  for (const run of await fs.readdir(runsDir)) {
    const trace = path.join(runsDir, run, 'trace.jsonl');
    if (!existsSync(trace)) continue;
    for (const line of (await fs.readFile(trace, 'utf8')).split('\n')) {
      if (line.includes('"type":"episode.end"')) episodes++;
      else if (line.includes('"type":"call.actual"')) realToolCalls++;
    }
  }
  return { episodes, realToolCalls };
}

/** Seeded PRNG (mulberry32), so the intervals are the same on every run. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mean and 95% bootstrap interval of per-unit values (each unit: the mean of its list of values). */
function interval(units) {
  const means = units.map((v) => v.reduce((a, b) => a + b, 0) / v.length);
  const mean = means.reduce((a, b) => a + b, 0) / Math.max(1, means.length);
  if (means.length < 2) return { mean, low: mean, high: mean, n: means.length };
  const random = prng(1);
  const draws = [];
  for (let b = 0; b < 2000; b++) {
    let s = 0;
    for (let i = 0; i < means.length; i++) s += means[Math.floor(random() * means.length)];
    draws.push(s / means.length);
  }
  draws.sort((x, y) => x - y);
  return { mean, low: draws[49], high: draws[1949], n: means.length };
}

/** Each task's value of `field`, averaged over the evaluations given (seeds). */
function perTask(evaluations, field) {
  const m = new Map();
  for (const e of evaluations)
    for (const t of e.tasks) m.set(t.task, [...(m.get(t.task) ?? []), t[field]]);
  return new Map([...m].map(([task, v]) => [task, v.reduce((a, b) => a + b, 0) / v.length]));
}

/**
 * A paired difference `a - b` of `field` over the held-out tasks both arms played: each task's
 * difference of its seed-averaged values, its mean, and a 95% bootstrap interval over tasks.
 */
function difference(name, metric, a, b) {
  const pa = perTask(a, metric);
  const pb = perTask(b, metric);
  const diffs = [...pa.keys()].filter((t) => pb.has(t)).map((t) => [pa.get(t) - pb.get(t)]);
  const d = interval(diffs);
  return { name, metric, mean: d.mean, ci95: [d.low, d.high], tasks: d.n };
}

/** Success and reward over held-out tasks, each task's value averaged over the evaluations given (seeds). */
function summarise(evaluations) {
  const byTask = (field) => {
    const m = new Map();
    for (const e of evaluations)
      for (const t of e.tasks) m.set(t.task, [...(m.get(t.task) ?? []), t[field]]);
    return [...m.values()];
  };
  const f1 = evaluations.flatMap((e) => e.fieldF1.map((x) => [x]));
  const mean = (xs) => {
    const v = xs.filter((x) => x !== null);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
  };
  return {
    success: interval(byTask('success')),
    reward: interval(byTask('reward')),
    fieldF1: f1.length ? interval(f1) : null,
    keyJaccard: mean(evaluations.map((e) => e.keyJaccard)),
    rehearsalValidity: mean(evaluations.map((e) => e.rehearsalValidity)),
    actValidity: mean(evaluations.map((e) => e.actValidity)),
  };
}

const pct = (x) =>
  `${(100 * x.mean).toFixed(1)}% [${(100 * x.low).toFixed(1)}, ${(100 * x.high).toFixed(1)}]`;
const num = (x) =>
  x === null || x === undefined
    ? '-'
    : typeof x === 'number'
      ? x.toFixed(2)
      : `${x.mean.toFixed(2)} [${x.low.toFixed(2)}, ${x.high.toFixed(2)}]`;
const row = (name, s, extra = '') =>
  `| ${name} | ${pct(s.success)} | ${num(s.reward)} | ${num(s.fieldF1)} | ${num(s.keyJaccard)} | ${num(s.rehearsalValidity)} | ${num(s.actValidity)} |${extra}`;

async function main() {
  if (!existsSync(CLI))
    throw new Error('dist/cli.js is missing: run `node scripts/build.mjs` first.');
  for (const [what, dir] of [
    ['BASE', BASE],
    ['POLICY', POLICY],
  ])
    if (!existsSync(path.join(dir, 'config.json')))
      throw new Error(
        `${what} ${dir} is not a model folder (no config.json): build the default policy with npm run train:default, or set ${what}.`,
      );
  if (process.argv.includes('--fresh')) await fs.rm(WORK, { recursive: true, force: true });
  await fs.mkdir(WORK, { recursive: true });
  log(
    `base ${path.relative(ROOT, BASE)}, policy ${path.relative(ROOT, POLICY)}; seeds ${SEEDS.join(', ')}; ${ITERATIONS} GRPO iterations of ${GRPO_TASKS}×2 tasks × ${EPISODES} episodes; ${HELDOUT}×2 held-out tasks; budgets 0, ${BUDGETS.join(', ')}`,
  );

  await step('tasks', async () => {
    for (const domain of DOMAINS) {
      await rehearse(
        'generate',
        domain,
        '--split',
        'train',
        '--start',
        String(GRPO_START),
        '--count',
        String(GRPO_TASKS),
        '--out',
        path.join(WORK, 'tasks/grpo', domain),
      );
      await rehearse(
        'generate',
        domain,
        '--split',
        'test',
        '--start',
        String(HELDOUT_START),
        '--count',
        String(HELDOUT),
        '--out',
        path.join(WORK, 'tasks/heldout', domain),
      );
    }
    return {
      grpo: { start: GRPO_START, perDomain: GRPO_TASKS },
      heldout: { start: HELDOUT_START, perDomain: HELDOUT },
    };
  });

  // A: policy learning.
  const none = await evaluate('eval-none', BASE);
  const arms = { imagined: [], real: [] };
  const grpoSteps = {};
  for (const seed of SEEDS) {
    for (const arm of ['imagined', 'real']) {
      const final = await grpo(arm, seed);
      grpoSteps[`${arm}-seed${seed}`] = JSON.parse(
        await fs.readFile(path.join(WORK, `grpo-${arm}-seed${seed}.json`), 'utf8'),
      );
      arms[arm].push(await evaluate(`eval-${arm}-seed${seed}`, final));
    }
  }
  // B: test-time private rehearsal with the committed policy.
  const budget0 = POLICY === BASE ? none : await evaluate('eval-policy-budget0', POLICY);
  // C: the committed policy against the point its recipe's GRPO started from (same held-out tasks).
  const recipeStartEval =
    RECIPE_START && POLICY !== BASE
      ? path.resolve(RECIPE_START) === BASE
        ? none
        : await evaluate('eval-recipe-start', path.resolve(RECIPE_START))
      : null;
  const privateRuns = [];
  for (const budget of BUDGETS) {
    for (const order of ['parallel', 'sequential']) {
      const evaluations = [];
      for (const seed of PRIVATE_SEEDS)
        evaluations.push(
          await evaluate(
            `eval-private-${order}-b${budget}${seed === PRIVATE_SEEDS[0] ? '' : `-seed${seed}`}`,
            POLICY,
            [
              '--mode',
              'private',
              '--budget',
              String(budget),
              '--order',
              order,
              '--rehearsal-temperature',
              String(REHEARSAL_TEMPERATURE),
              '--seed',
              String(seed),
            ],
          ),
        );
      privateRuns.push({ budget, order, evaluations, summary: summarise(evaluations) });
    }
  }
  const privateOf = (budget, order) =>
    privateRuns.find((p) => p.budget === budget && p.order === order)?.evaluations ?? [];
  const differences = [];
  for (const metric of ['success', 'reward']) {
    differences.push(
      difference('imagined-vs-none', metric, arms.imagined, [none]),
      difference('imagined-vs-real', metric, arms.imagined, arms.real),
      difference('real-vs-none', metric, arms.real, [none]),
    );
    if (recipeStartEval)
      differences.push(
        difference('recipe-grpo-vs-start', metric, [budget0], [recipeStartEval]),
        difference('policy-vs-sft', metric, [budget0], [none]),
      );
    for (const budget of BUDGETS)
      differences.push(
        difference(`budget${budget}-vs-budget0`, metric, privateOf(budget, 'sequential'), [
          budget0,
        ]),
        difference(
          `budget${budget}-parallel-vs-sequential`,
          metric,
          privateOf(budget, 'parallel'),
          privateOf(budget, 'sequential'),
        ),
      );
  }
  const compute = Object.fromEntries(
    ['imagined', 'real'].map((arm) => {
      const runs = SEEDS.map((seed) => grpoSteps[`${arm}-seed${seed}`]);
      return [
        arm,
        {
          episodes: runs.reduce((a, r) => a + (r.episodes ?? 0), 0),
          realToolCalls: runs.reduce((a, r) => a + (r.realToolCalls ?? 0), 0),
        },
      ];
    }),
  );

  const header =
    '| | task success [95% CI] | mean reward | field F1 | key Jaccard | rehearsal validity | act parse validity |\n| --- | --- | --- | --- | --- | --- | --- |';
  const md = [
    `### A. GRPO with world rehearsal vs real rollouts vs none (${ITERATIONS} iterations, ${GRPO_TASKS * 2} tasks × ${EPISODES} episodes, seeds ${SEEDS.join(', ')}; ${HELDOUT * 2} held-out tasks)`,
    '',
    header,
    row('no GRPO (base)', summarise([none])),
    row('GRPO, imagined rollouts (world rehearsal)', summarise(arms.imagined)),
    row('GRPO, real tool rollouts (baseline)', summarise(arms.real)),
    '',
    `GRPO compute per arm (all seeds): imagined ${compute.imagined.episodes} episodes, ${compute.imagined.realToolCalls} real tool calls; real ${compute.real.episodes} episodes, ${compute.real.realToolCalls} real tool calls.`,
    '',
    `### B. Private rehearsal at test time (${path.relative(ROOT, POLICY)}; imagined episodes at temperature ${REHEARSAL_TEMPERATURE}, seeds ${PRIVATE_SEEDS.join(', ')}; budget 0 is greedy)`,
    '',
    header,
    row('budget 0 (shadow)', summarise([budget0])),
    ...privateRuns.map((p) => row(`budget ${p.budget}, ${p.order}`, p.summary)),
    '',
    ...(recipeStartEval
      ? [
          `### C. The committed policy's own GRPO (${RECIPE.grpo.grpo?.iterations ?? '?'} iterations of imagined rollouts at the recipe's scale, one training seed, the best validated point) vs where it started`,
          '',
          header,
          row(`SFT (${path.relative(ROOT, BASE)})`, summarise([none])),
          row(
            `GRPO's start (${path.relative(ROOT, path.resolve(RECIPE_START))})`,
            summarise([recipeStartEval]),
          ),
          row(`committed policy (${path.relative(ROOT, POLICY)})`, summarise([budget0])),
          '',
        ]
      : []),
    "### Paired differences (each task's difference of its seed-averaged values; 95% bootstrap interval over tasks)",
    '',
    '| difference | metric | mean | 95% interval |',
    '| --- | --- | --- | --- |',
    ...differences.map(
      (d) =>
        `| ${d.name} | ${d.metric} | ${d.mean >= 0 ? '+' : ''}${d.mean.toFixed(3)} | [${d.ci95[0].toFixed(3)}, ${d.ci95[1].toFixed(3)}] |`,
    ),
    '',
    `Held-out tasks: test-split seeds from ${HELDOUT_START}; GRPO tasks: train-split seeds from ${GRPO_START}; intervals: bootstrap over tasks (each task's value averaged over seeds). ${((Date.now() - started) / 60000).toFixed(1)} min this run.`,
  ].join('\n');
  const effects = {
    seeds: SEEDS,
    privateRehearsalSeeds: PRIVATE_SEEDS,
    heldOutTasks: HELDOUT * DOMAINS.length,
    grpo: { iterations: ITERATIONS, tasks: GRPO_TASKS * DOMAINS.length, episodes: EPISODES },
    compute,
    differences,
  };
  if (process.argv.includes('--publish'))
    await fs.writeFile(
      path.join(ROOT, 'docs/envace-effects.json'),
      JSON.stringify(effects, null, 2) + '\n',
    );
  await fs.writeFile(path.join(WORK, 'results.md'), md + '\n');
  await fs.writeFile(
    path.join(WORK, 'results.json'),
    JSON.stringify(
      {
        base: BASE,
        policy: POLICY,
        seeds: SEEDS,
        iterations: ITERATIONS,
        episodes: EPISODES,
        grpoTasksPerDomain: GRPO_TASKS,
        heldoutPerDomain: HELDOUT,
        grpo: grpoSteps,
        effects,
        policyLearning: {
          none: summarise([none]),
          imagined: summarise(arms.imagined),
          real: summarise(arms.real),
        },
        recipeGrpo: recipeStartEval
          ? {
              start: path.resolve(RECIPE_START),
              startSummary: summarise([recipeStartEval]),
              policy: summarise([budget0]),
            }
          : null,
        privateRehearsal: [
          { budget: 0, order: 'none', summary: summarise([budget0]) },
          ...privateRuns.map(({ evaluations: _e, ...p }) => p),
        ],
      },
      null,
      2,
    ) + '\n',
  );
  console.log(`\n${md}\n\n(${path.join(WORK, 'results.md')})`);
}

main().catch((err) => {
  console.error(`measure:envace failed: ${err.message}`);
  process.exit(1);
});
