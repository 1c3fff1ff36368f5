import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { loadTasks } from '../../core/tasks/format/loader';
import { readTraceEvents } from '../../core/trace/format/reader';
import type { ArmRun } from '../trainDefault/grpoArm';
import { evaluateOn } from '../measureEnvace/arms';
import { mergedEffects } from '../measureEnvace/effectsFile';
import type { Evaluation } from '../measureEnvace/stats';
import { summarise } from '../measureEnvace/stats';
import { makeDir, readJson, readJsonOr, removeTree, writeJson, writeText } from '../shared/files';
import type { ProgressLog } from '../shared/log';
import { progressLog } from '../shared/log';
import { cachedStep, stepKey } from '../shared/stages';
import { ROOT, rehearse, requireCli, shown } from '../shared/studio';
import { say } from '../shared/terminal';
import type { Recipe } from '../trainDefault/settings';
import type { ForesightContext } from './context';
import {
  builtinRows,
  demonstrationRows,
  generateTasks,
  loggedRows,
  memoryRows,
  referenceRun,
  taskFolder,
} from './data';
import type { Verdict } from './memories';
import type { ForesightMeasured, PrivateRuns } from './results';
import { foresightEffects, foresightMarkdown, foresightProblems } from './results';
import type { ForesightSettings } from './settings';
import { BUDGET } from './settings';
import type { RuleAccuracy } from './traces';
import {
  actAccuracy,
  inventedIds,
  pooledAccuracy,
  pooledInventedIds,
  worldModelAccuracy,
} from './traces';
import { foresightGrpo, sftArm } from './training';

/** A trained policy: its folder and the key of the step that made it. */
interface Trained {
  final: string;
  key: string;
}

/** The world model's accuracy on the rule: the policy's replay of the held-out logged transfers. */
function worldModelStep(ctx: ForesightContext, policy: Trained): Promise<RuleAccuracy> {
  const { work } = ctx.settings;
  const key = stepKey({ tasks: taskFolder(ctx, 'heldout-logged').holds, policy: policy.key });
  return cachedStep(work, { name: 'world-model', key }, ctx.log, async () => {
    const runs = path.join(work, 'runs', 'world-model');
    await removeTree(runs);
    const trace = await referenceRun(ctx, 'heldout-logged');
    const out = await rehearse(
      ...['replay', trace, '--policy', policy.final, '--out', runs, '--no-progress', '--json'],
    );
    const replayed = (JSON.parse(out) as { run: { traceFile: string } }).run.traceFile;
    const accuracy = worldModelAccuracy((await readTraceEvents(replayed)).events);
    ctx.log(
      `  world model: ${(100 * accuracy.accuracy).toFixed(1)}% of ${accuracy.n} verdicts right`,
    );
    return accuracy;
  });
}

/** `run` options of private rehearsal with an outcomes memory at {@link BUDGET}. */
function privateArgs(ctx: ForesightContext, order: string, seed: number): string[] {
  return [
    ...['--mode', 'private', '--budget', String(BUDGET), '--order', order, '--memory', 'outcomes'],
    ...['--rehearsal-temperature', String(ctx.settings.rehearsalTemperature)],
    ...['--seed', String(seed)],
  ];
}

/** A policy on a task folder at budget 0 and at budget 2 in each order and private seed. */
async function budgets(
  ctx: ForesightContext,
  name: string,
  tasks: string,
  policy: Trained,
  orders: readonly string[],
): Promise<{ budget0: Evaluation; budget2: PrivateRuns }> {
  const step = { work: ctx.settings.work, log: ctx.log, tasks: taskFolder(ctx, tasks) };
  const budget0 = await evaluateOn(step, `eval-${name}-budget0`, policy.final, [], policy.key);
  const budget2: PrivateRuns = {};
  for (const order of orders) {
    budget2[order] = [];
    for (const seed of ctx.settings.privateSeeds)
      budget2[order].push(
        await evaluateOn(
          step,
          `eval-${name}-budget${BUDGET}-${order}-seed${seed}`,
          policy.final,
          privateArgs(ctx, order, seed),
          policy.key,
        ),
      );
  }
  return { budget0, budget2 };
}

/** Each held-out task's verdict, from its tags (`foresight-refused`, `foresight-allowed`). */
async function verdicts(ctx: ForesightContext, tasks: string): Promise<Map<string, Verdict>> {
  const loaded = await loadTasks([taskFolder(ctx, tasks).dir]);
  return new Map(
    loaded.map(({ task }) => [
      task.id,
      task.tags?.includes('foresight-refused') ? ('refused' as const) : ('ok' as const),
    ]),
  );
}

const eventsOf = async (e: Evaluation) => (await readTraceEvents(e.trace)).events;

/** The act's rule accuracy in each foresight evaluation (its seeds pooled). */
async function actAccuracies(ctx: ForesightContext, m: ForesightMeasured) {
  const main = await verdicts(ctx, 'heldout');
  const twin = await verdicts(ctx, 'heldout-twin');
  const of = async (runs: readonly Evaluation[], truth: Map<string, Verdict>) =>
    pooledAccuracy(await Promise.all(runs.map(async (r) => actAccuracy(await eventsOf(r), truth))));
  const out: Record<string, RuleAccuracy> = {
    'foresight-budget0': await of([m.foresight.budget0], main),
    'foresight-imagined-budget0': await of(m.imagined, main),
    'twin-budget0': await of([m.twin.budget0], twin),
  };
  for (const [order, runs] of Object.entries(m.foresight.budget2))
    out[`foresight-budget${BUDGET}-${order}`] = await of(runs, main);
  for (const [order, runs] of Object.entries(m.twin.budget2))
    out[`twin-budget${BUDGET}-${order}`] = await of(runs, twin);
  return out;
}

/** Calls on invented ids in the built-in comparison, by arm (seeds pooled). */
async function builtinInventedIds(m: ForesightMeasured) {
  const of = async (runs: readonly Evaluation[]) =>
    pooledInventedIds(await Promise.all(runs.map(async (r) => inventedIds(await eventsOf(r)))));
  const out = { budget0: await of([m.builtin.budget0]) } as Record<
    string,
    ReturnType<typeof inventedIds>
  >;
  for (const [order, runs] of Object.entries(m.builtin.budget2))
    out[`budget${BUDGET}-${order}`] = await of(runs);
  return out;
}

/** Fails unless BASE is a model folder. */
function checkBase(s: ForesightSettings): void {
  if (!existsSync(path.join(s.base, 'config.json')))
    throw new Error(
      `BASE ${s.base} is not a model folder (no config.json): build the default policy with npm run train:default, or set BASE.`,
    );
}

/** The recipe, BASE's prompt settings and the context every step reads. */
async function context(s: ForesightSettings, log: ProgressLog): Promise<ForesightContext> {
  const recipe = await readJson<Recipe>(s.recipeFile);
  const config = await readJsonOr<{ rehearsePrompt?: unknown; identifierSlots?: boolean }>(
    path.join(s.base, 'rehearsal_config.json'),
    {},
  );
  return {
    settings: s,
    recipe,
    log,
    prompt: {
      ...(config.rehearsePrompt !== undefined ? { rehearsePrompt: config.rehearsePrompt } : {}),
      identifierSlots: !!config.identifierSlots,
    },
  };
}

/**
 * `npm run measure:foresight`: issue 41's foresight arms, on the `bank-foresight` family, where a
 * stationary rule the act's demonstrations never show refuses half the transfers, while logged write
 * calls show it to the world model. Two SFT arms continue from BASE: the foresight arm on the main
 * family's act demonstrations (allowed tasks only), the logged calls' rehearse rows and memory-reading
 * rows (act rows of both verdicts, each read with an `outcomes` memory of its true outcome, FLIP_RATE
 * of them flipped); the twin arm the same with the twin's demonstrations, which show refusals. Then, on
 * held-out tasks: private rehearsal at budget 2 (`--memory outcomes`, parallel and sequential, a run
 * a private seed) vs budget 0 for each arm on its family; imagined GRPO from the foresight SFT vs none;
 * and the foresight SFT at budget 2 vs 0 on the built-in families (measure:envace's held-out tasks),
 * with calls on invented ids counted. The falsifiers: the world model's rule accuracy (a replay of
 * held-out logged transfers) against the act's (budget 0), and the twin's difference, which should
 * hold 0. Paired bootstrap intervals over tasks. Every step is kept in WORK and runs again only when
 * the settings it depends on changed (`--fresh` starts over); training runs resume. Writes
 * results.json and results.md, fails when the effects are out of form ({@link foresightProblems}),
 * and with `--publish` writes its part into docs/envace-effects.json (measure:envace's part kept).
 */
export async function measureForesight(
  s: ForesightSettings,
  log: ProgressLog = progressLog('measure:foresight'),
): Promise<void> {
  requireCli();
  checkBase(s);
  if (s.fresh) await removeTree(s.work);
  await makeDir(s.work);
  const ctx = await context(s, log);
  const episodes = s.episodes ?? ctx.recipe.grpo.episodes;
  log(
    `base ${shown(s.base)}; ${s.demonstrations} demonstrations a family, ${s.logged} logged calls, ${s.memoryTasks} memory-reading tasks (${s.flipRate} flipped), ${s.builtinDemonstrations} built-in demonstrations a domain; SFT ${s.sftSteps} steps of ${s.sftBatch}; GRPO seeds ${s.seeds.join(', ')}, ${s.iterations} iterations of ${s.grpoTasks} tasks × ${episodes} episodes; ${s.heldout} held-out tasks a family, ${s.builtinHeldout}×2 built-in; budget ${BUDGET} ${s.orders.join(' and ')}, private seeds ${s.privateSeeds.join(', ')}`,
  );
  await generateTasks(ctx);
  const rows = {
    demonstrations: await demonstrationRows(ctx, 'foresight'),
    twin: await demonstrationRows(ctx, 'twin'),
    logged: await loggedRows(ctx),
    memory: await memoryRows(ctx),
    builtin: await builtinRows(ctx),
  };
  const shared = [rows.logged, rows.memory, ...rows.builtin];
  const foresight = await sftArm(ctx, 'foresight', [rows.demonstrations, ...shared]);
  const twin = await sftArm(ctx, 'twin', [rows.twin, ...shared]);
  // The cheapest figures first: the falsifier's world model, then each arm at budget 0 and 2.
  const worldModel = await worldModelStep(ctx, foresight);
  const foresightRuns = await budgets(ctx, 'foresight', 'heldout', foresight, s.orders);
  const twinRuns = await budgets(ctx, 'twin', 'heldout-twin', twin, s.orders);
  const grpo: ArmRun[] = [];
  const imagined: Evaluation[] = [];
  for (const seed of s.seeds) {
    const { final, run, key } = await foresightGrpo(ctx, foresight, seed);
    grpo.push(run);
    const step = { work: s.work, log, tasks: taskFolder(ctx, 'heldout') };
    imagined.push(await evaluateOn(step, `eval-foresight-imagined-seed${seed}`, final, [], key));
  }
  const builtin = await budgets(ctx, 'builtin', 'heldout-builtin', foresight, s.builtinOrders);
  const m: ForesightMeasured = { foresight: foresightRuns, twin: twinRuns, imagined, builtin };
  const effects = foresightEffects(s, m, {
    rows: {
      demonstrations: rows.demonstrations.rows,
      twin: rows.twin.rows,
      logged: rows.logged.rows,
      memory: rows.memory.rows,
      builtin: rows.builtin.reduce((a, r) => a + r.rows, 0),
    },
    flip: rows.memory.flip,
    grpo,
    episodes,
    worldModel,
    act: await actAccuracies(ctx, m),
    inventedIds: await builtinInventedIds(m),
  });
  const md = foresightMarkdown(s, m, effects, (Date.now() - log.started) / 60000);
  await writeText(path.join(s.work, 'results.md'), md + '\n');
  const summaries = (arm: ForesightMeasured['foresight']) => ({
    budget0: summarise([arm.budget0]),
    ...Object.fromEntries(Object.entries(arm.budget2).map(([o, r]) => [o, summarise(r)])),
  });
  await writeJson(path.join(s.work, 'results.json'), {
    base: s.base,
    models: { foresight: foresight.final, twin: twin.final },
    effects,
    grpo,
    summaries: {
      foresight: summaries(m.foresight),
      twin: summaries(m.twin),
      imagined: summarise(m.imagined),
      builtin: summaries(m.builtin),
    },
  });
  say(`\n${md}\n\n(${path.join(s.work, 'results.md')})`);
  const problems = foresightProblems(effects);
  if (problems.length)
    throw new Error(`the foresight effects are not what they must be: ${problems.join('; ')}`);
  if (s.publish) {
    const file = path.join(ROOT, 'docs/envace-effects.json');
    const existing = await readJsonOr<Record<string, unknown> | undefined>(file, undefined);
    await writeJson(file, mergedEffects(existing, { ...effects }, 'foresight'));
  }
}
