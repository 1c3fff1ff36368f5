import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { makeDir, readJson, readJsonOr, removeTree, writeJson, writeText } from '../shared/files';
import type { ProgressLog } from '../shared/log';
import { progressLog } from '../shared/log';
import { cachedStep } from '../shared/stages';
import { ROOT, rehearse, requireCli } from '../shared/studio';
import { groundTasks } from '../trainDefault/data';
import type { Recipe } from '../trainDefault/settings';
import type { ArmRun } from '../trainDefault/grpoArm';
import type { MeasureContext } from './arms';
import { evaluate, grpoArm, grpoTaskCount, heldoutSourceText, tasksKey } from './arms';
import type { Measured } from './effects';
import { differences } from './effects';
import { mergedEffects } from './effectsFile';
import { imaginedVersusReal } from './fidelity';
import { effectsProblems, resultsJson, resultsMarkdown } from './results';
import type { MeasureSettings } from './settings';
import { DOMAINS, GRPO_START, HELDOUT_START } from './settings';
import type { Evaluation } from './stats';
import { say } from '../shared/terminal';

/**
 * The GRPO tasks (new ones each iteration) and the held-out tasks (seeds no recipe uses; none with
 * HELDOUT_TASKS), once.
 */
async function tasks(ctx: MeasureContext): Promise<void> {
  const { work, heldout } = ctx.settings;
  const grpoTasks = grpoTaskCount(ctx.settings);
  await cachedStep(work, { name: 'tasks', key: tasksKey(ctx.settings) }, ctx.log, async () => {
    await removeTree(path.join(work, 'tasks'));
    const generate = (domain: string, split: string, start: number, count: number, out: string) =>
      rehearse(
        ...['generate', domain, '--split', split, '--start', String(start)],
        ...['--count', String(count), '--out', path.join(work, out, domain)],
      );
    // HELDOUT_TASKS: the evaluations play that folder's tasks, none is generated.
    const generated = ctx.settings.heldoutTasks ? 0 : heldout;
    for (const domain of DOMAINS) {
      await generate(domain, 'train', GRPO_START, grpoTasks, 'tasks/grpo');
      if (generated) await generate(domain, 'test', HELDOUT_START, generated, 'tasks/heldout');
    }
    return {
      grpo: { start: GRPO_START, perDomain: grpoTasks },
      heldout: { start: HELDOUT_START, perDomain: generated },
    };
  });
  // Grounded imagination (the recipe's grpo.groundedImagination): the GRPO tasks with their
  // reference's real responses as examples; the held-out tasks never get any.
  if (ctx.recipe.grpo.groundedImagination)
    await cachedStep(
      work,
      { name: 'tasks-grounded', key: tasksKey(ctx.settings) },
      ctx.log,
      async () => ({
        summary: await groundTasks(
          path.join(work, 'tasks/grpo'),
          path.join(work, 'tasks/grpo-grounded'),
        ),
      }),
    );
}

/** A: GRPO on imagined vs real rollouts vs none, per training seed. */
async function policyLearning(ctx: MeasureContext) {
  const none = await evaluate(ctx, 'eval-none', ctx.settings.base);
  const arms = { imagined: [] as Evaluation[], real: [] as Evaluation[] };
  const grpoSteps: Record<string, ArmRun> = {};
  for (const seed of ctx.settings.seeds)
    for (const arm of ['imagined', 'real'] as const) {
      const { final, run, key } = await grpoArm(ctx, arm, seed);
      grpoSteps[`${arm}-seed${seed}`] = run;
      arms[arm].push(await evaluate(ctx, `eval-${arm}-seed${seed}`, final, [], key));
    }
  return { none, arms, grpoSteps };
}

/** B: private rehearsal at test time with POLICY: each budget, parallel and sequential, each seed. */
async function privateRehearsal(ctx: MeasureContext) {
  const s = ctx.settings;
  const runs: Measured['privateRuns'] = [];
  for (const budget of s.budgets)
    for (const order of ['parallel', 'sequential']) {
      const evaluations: Evaluation[] = [];
      for (const seed of s.privateSeeds) {
        const name = `eval-private-${order}-b${budget}${seed === s.privateSeeds[0] ? '' : `-seed${seed}`}`;
        const args = ['--mode', 'private', '--budget', String(budget), '--order', order];
        args.push(
          '--rehearsal-temperature',
          String(s.rehearsalTemperature),
          '--seed',
          String(seed),
        );
        evaluations.push(await evaluate(ctx, name, s.policy, args));
      }
      runs.push({ budget, order, evaluations });
    }
  return runs;
}

/** Every evaluation of A, B and C. */
async function measure(ctx: MeasureContext) {
  const s = ctx.settings;
  // First the cheapest figure: how faithful imagination is for the starting policy (minutes).
  const fidelity = await imaginedVersusReal(ctx);
  const { none, arms, grpoSteps } = await policyLearning(ctx);
  // C: the committed policy against the point its recipe's GRPO started from (same held-out tasks).
  const withC = !!s.recipeStart && s.policy !== s.base;
  // POLICY at budget 0: B's and C's reference point; neither needs it when both are left out.
  const budget0 =
    !withC && s.budgets.length === 0
      ? null
      : s.policy === s.base
        ? none
        : await evaluate(ctx, 'eval-policy-budget0', s.policy);
  const recipeStart =
    withC && s.recipeStart
      ? s.recipeStart === s.base
        ? none
        : await evaluate(ctx, 'eval-recipe-start', s.recipeStart)
      : null;
  const privateRuns = await privateRehearsal(ctx);
  const measured: Measured = { none, arms, budget0, recipeStart, privateRuns };
  return { measured, grpoSteps, fidelity };
}

/** Fails unless BASE and POLICY are model folders. */
function checkModels(s: MeasureSettings): void {
  for (const [what, dir] of [
    ['BASE', s.base],
    ['POLICY', s.policy],
  ])
    if (!existsSync(path.join(dir, 'config.json')))
      throw new Error(
        `${what} ${dir} is not a model folder (no config.json): build the default policy with npm run train:default, or set ${what}.`,
      );
}

/**
 * `npm run measure:envace`: EnvACE's two effects, measured with the studio's own CLI and trainer on
 * held-out tasks (test-split seeds no recipe uses), shadow mode against the real servers, greedy.
 * A: GRPO on imagined rollouts vs on real tool rollouts vs none, from BASE at equal act updates
 * (the same episodes, mini-batches of episodes, each role's token-mean: `armDose` in arms.ts),
 * and how faithful BASE's imagination is (the same tasks played imagined and real, one grader).
 * HELDOUT_TASKS puts a folder of task files (τ²'s import) in the generated held-out tasks' place
 * for every evaluation, with USER_ENDPOINT playing their users.
 * B: private rehearsal at test time, POLICY at budget 0 and BUDGETS, parallel and sequential
 * (`BUDGETS=` leaves it out).
 * C: POLICY against where its own GRPO started (RECIPE_START) and the SFT, when that work is there.
 * Paired differences with bootstrap intervals over tasks; each arm's compute is counted. Every
 * finished step is kept in WORK and skipped next time, unless the settings it depends on changed
 * (then it runs again); `--fresh` starts over, and is needed when a model folder changed in place.
 * GRPO runs go through the training-run lifecycle, so an interrupted one resumes. Writes
 * results.json and results.md, and fails when the effects are out of form
 * ({@link effectsProblems}); `--publish` then writes docs/envace-effects.json (measure:foresight's
 * part of it kept: {@link mergedEffects}).
 */
export async function measureEnvace(
  s: MeasureSettings,
  log: ProgressLog = progressLog('measure:envace'),
) {
  requireCli();
  checkModels(s);
  if (s.fresh) await removeTree(s.work);
  await makeDir(s.work);
  const read = await readJson<Recipe>(s.recipeFile);
  // GROUNDED overrides the recipe's switch for every arm and for the fidelity comparison.
  const recipe: Recipe =
    s.grounded === undefined
      ? read
      : { ...read, grpo: { ...read.grpo, groundedImagination: s.grounded } };
  const ctx: MeasureContext = { settings: s, recipe, log };
  const episodes = s.episodes ?? recipe.grpo.episodes;
  const perIteration = s.grpoTasks * DOMAINS.length * episodes;
  const steps = Math.ceil(perIteration / s.miniBatchEpisodes) * s.ppoEpochs * s.iterations;
  log(
    `base ${path.relative(ROOT, s.base)}, policy ${path.relative(ROOT, s.policy)}; seeds ${s.seeds.join(', ')}; ${s.iterations} GRPO iterations of ${s.grpoTasks}×2 new tasks × ${episodes} episodes, mini-batches of ${s.miniBatchEpisodes} episodes × ${s.ppoEpochs} epochs (${steps} steps an arm); held-out tasks: ${heldoutSourceText(s)}; ${s.fidelityTasks}×2 tasks × ${s.fidelityEpisodes} episodes imagined and real; ${s.budgets.length ? `budgets 0, ${s.budgets.join(', ')}` : 'no private rehearsal (BUDGETS empty)'}`,
  );
  await tasks(ctx);
  const { measured, grpoSteps, fidelity } = await measure(ctx);
  const found = differences(measured, s.budgets);
  const results = resultsJson(ctx, measured, grpoSteps, fidelity, found);
  const md = resultsMarkdown(ctx, measured, results.effects, (Date.now() - log.started) / 60000);
  await writeText(path.join(s.work, 'results.md'), md + '\n');
  await writeJson(path.join(s.work, 'results.json'), results);
  say(`\n${md}\n\n(${path.join(s.work, 'results.md')})`);
  const problems = effectsProblems(results.effects);
  if (problems.length)
    throw new Error(`the effects are not what they must be: ${problems.join('; ')}`);
  if (s.publish) {
    // measure:foresight's part of the file stays as it was.
    const file = path.join(ROOT, 'docs/envace-effects.json');
    const existing = await readJsonOr<Record<string, unknown> | undefined>(file, undefined);
    await writeJson(file, mergedEffects(existing, { ...results.effects }, 'envace'));
  }
}
