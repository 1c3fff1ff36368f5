import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { makeDir, readJson, removeTree, writeJson, writeText } from '../shared/files';
import type { ProgressLog } from '../shared/log';
import { progressLog } from '../shared/log';
import { cachedStep } from '../shared/stages';
import { ROOT, rehearse, requireCli } from '../shared/studio';
import { groundTasks } from '../trainDefault/data';
import type { Recipe } from '../trainDefault/settings';
import type { MeasureContext } from './arms';
import { evaluate, grpoArm } from './arms';
import type { Measured } from './effects';
import { differences } from './effects';
import { resultsJson, resultsMarkdown } from './results';
import type { MeasureSettings } from './settings';
import { DOMAINS, GRPO_START, HELDOUT_START } from './settings';
import type { Evaluation } from './stats';
import { say } from '../shared/terminal';

/** The GRPO tasks and the held-out tasks (seeds no recipe uses), once. */
async function tasks(ctx: MeasureContext): Promise<void> {
  const { work, grpoTasks, heldout } = ctx.settings;
  await cachedStep(work, 'tasks', ctx.log, async () => {
    const generate = (domain: string, split: string, start: number, count: number, out: string) =>
      rehearse(
        ...['generate', domain, '--split', split, '--start', String(start)],
        ...['--count', String(count), '--out', path.join(work, out, domain)],
      );
    for (const domain of DOMAINS) {
      await generate(domain, 'train', GRPO_START, grpoTasks, 'tasks/grpo');
      await generate(domain, 'test', HELDOUT_START, heldout, 'tasks/heldout');
    }
    return {
      grpo: { start: GRPO_START, perDomain: grpoTasks },
      heldout: { start: HELDOUT_START, perDomain: heldout },
    };
  });
  // Grounded imagination (the recipe's grpo.groundedImagination): the GRPO tasks with their
  // reference's real responses as examples; the held-out tasks never get any.
  if (ctx.recipe.grpo.groundedImagination)
    await cachedStep(work, 'tasks-grounded', ctx.log, async () => ({
      summary: await groundTasks(
        path.join(work, 'tasks/grpo'),
        path.join(work, 'tasks/grpo-grounded'),
      ),
    }));
}

/** A: GRPO on imagined vs real rollouts vs none, per training seed. */
async function policyLearning(ctx: MeasureContext) {
  const none = await evaluate(ctx, 'eval-none', ctx.settings.base);
  const arms = { imagined: [] as Evaluation[], real: [] as Evaluation[] };
  const grpoSteps: Record<string, Record<string, unknown>> = {};
  for (const seed of ctx.settings.seeds)
    for (const arm of ['imagined', 'real'] as const) {
      const final = await grpoArm(ctx, arm, seed);
      const step = path.join(ctx.settings.work, `grpo-${arm}-seed${seed}.json`);
      grpoSteps[`${arm}-seed${seed}`] = await readJson(step);
      arms[arm].push(await evaluate(ctx, `eval-${arm}-seed${seed}`, final));
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
  const { none, arms, grpoSteps } = await policyLearning(ctx);
  const budget0 = s.policy === s.base ? none : await evaluate(ctx, 'eval-policy-budget0', s.policy);
  // C: the committed policy against the point its recipe's GRPO started from (same held-out tasks).
  const recipeStart =
    s.recipeStart && s.policy !== s.base
      ? s.recipeStart === s.base
        ? none
        : await evaluate(ctx, 'eval-recipe-start', s.recipeStart)
      : null;
  const privateRuns = await privateRehearsal(ctx);
  const measured: Measured = { none, arms, budget0, recipeStart, privateRuns };
  return { measured, grpoSteps };
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
 * A: GRPO on imagined rollouts vs on real tool rollouts vs none, from BASE with the same compute.
 * B: private rehearsal at test time, POLICY at budget 0 and BUDGETS, parallel and sequential.
 * C: POLICY against where its own GRPO started (RECIPE_START) and the SFT, when that work is there.
 * Paired differences with bootstrap intervals over tasks; each arm's compute is counted. Every
 * finished step is kept in WORK and skipped next time (`--fresh` starts over); GRPO runs go through
 * the training-run lifecycle, so an interrupted one resumes. Writes results.json and results.md;
 * `--publish` also writes docs/envace-effects.json.
 */
export async function measureEnvace(
  s: MeasureSettings,
  log: ProgressLog = progressLog('measure:envace'),
) {
  requireCli();
  checkModels(s);
  if (s.fresh) await removeTree(s.work);
  await makeDir(s.work);
  const recipe = await readJson<Recipe>(s.recipeFile);
  const ctx: MeasureContext = { settings: s, recipe, log };
  const episodes = s.episodes ?? recipe.grpo.episodes;
  log(
    `base ${path.relative(ROOT, s.base)}, policy ${path.relative(ROOT, s.policy)}; seeds ${s.seeds.join(', ')}; ${s.iterations} GRPO iterations of ${s.grpoTasks}×2 tasks × ${episodes} episodes; ${s.heldout}×2 held-out tasks; budgets 0, ${s.budgets.join(', ')}`,
  );
  await tasks(ctx);
  const { measured, grpoSteps } = await measure(ctx);
  const found = differences(measured, s.budgets);
  const results = resultsJson(ctx, measured, grpoSteps, found);
  if (s.publish) await writeJson(path.join(ROOT, 'docs/envace-effects.json'), results.effects);
  const md = resultsMarkdown(ctx, measured, results.effects, (Date.now() - log.started) / 60000);
  await writeText(path.join(s.work, 'results.md'), md + '\n');
  await writeJson(path.join(s.work, 'results.json'), results);
  say(`\n${md}\n\n(${path.join(s.work, 'results.md')})`);
}
