import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { readTrainerEvents } from '../../core/training/launch/supervisor';
import { readJson, writeJson } from '../shared/files';
import { progressLog } from '../shared/log';
import { ROOT } from '../shared/studio';
import { trainDefault } from '../trainDefault';
import { fromEnv } from '../trainDefault/settings';
import type { Advantages, CurvePoint, RolloutRow } from './figures';
import { GOAL, curveTable, goalReached, iterationFigures, sanityFailures } from './figures';
import { say } from '../shared/terminal';

const readJsonl = async <T>(file: string): Promise<T[]> =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);

/** Each GRPO iteration's figures, from its rollout rows and its `rollouts` event. */
async function sanityCurve(grpo: string): Promise<CurvePoint[]> {
  const signal = new Map<number, Advantages>();
  for (const e of (await readTrainerEvents(grpo)).events)
    if (e.event === 'rollouts') signal.set(e.iteration as number, e.advantages as Advantages);
  const curve: CurvePoint[] = [];
  for (let it = 0; ; it++) {
    const file = path.join(grpo, 'rollouts', `iter-${String(it).padStart(4, '0')}`, 'rows.jsonl');
    if (!existsSync(file)) break;
    const figures = iterationFigures(await readJsonl<RolloutRow>(file));
    curve.push({ iteration: it, ...figures, advantages: signal.get(it) });
  }
  return curve;
}

/**
 * `npm run measure:grpo-sanity`: GRPO's sanity task. The recipe in training/sanity/recipe.json runs
 * the whole train:default pipeline on the bank-choice family (only the phone lookup is rewarded;
 * the demonstrations take each lookup half the time): SFT makes a policy near chance, then role-wise
 * GRPO on imagined rollouts, graded by trajectory items alone, must raise the rollouts' success above
 * 90% within the recipe's iterations. If it does not, the GRPO implementation is wrong. It also
 * checks that no iteration before that point had all its advantages at zero. Work files go to
 * .rehearsal/training/sanity (WORK=... elsewhere); the curve is printed and written to
 * WORK/sanity.json. Fails when a check fails.
 */
export async function grpoSanity(env: Record<string, string | undefined>): Promise<void> {
  const recipeFile = path.join(ROOT, 'training/sanity/recipe.json');
  const work = fromEnv(env.WORK, ROOT, '.rehearsal/training/sanity');
  const model = path.join(work, 'model');
  await trainDefault({ recipeFile, work, model, fresh: true }, progressLog('train:default'));
  const curve = await sanityCurve(path.join(work, 'grpo'));
  const manifest = await readJson<{ scores: { taskSuccess: number | null } }>(
    path.join(model, 'manifest.json'),
  );
  say(`\n${curveTable(curve)}`);
  const reached = goalReached(curve);
  const failures = sanityFailures(curve);
  await writeJson(path.join(work, 'sanity.json'), {
    recipe: path.relative(ROOT, recipeFile),
    goal: GOAL,
    reachedAtIteration: reached?.iteration ?? null,
    greedyTestSuccess: manifest.scores.taskSuccess,
    curve,
    failures,
  });
  const where = reached ? `above ${GOAL} at iteration ${reached.iteration}` : `never above ${GOAL}`;
  say(
    `\nimagined-rollout success ${curve[0]?.success.toFixed(2)} after SFT; ${where}; greedy success on the test split after GRPO ${manifest.scores.taskSuccess}`,
  );
  if (failures.length) throw new Error(`GRPO sanity task FAILED:\n- ${failures.join('\n- ')}`);
  say('GRPO sanity task passed.');
}
