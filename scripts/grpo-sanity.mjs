// `npm run measure:grpo-sanity`: GRPO's sanity task. The recipe in training/sanity/recipe.json runs
// the whole train:default pipeline on the bank-choice family (only the phone lookup is rewarded; the
// demonstrations take each lookup half the time): SFT makes a policy near chance, then role-wise GRPO
// on imagined rollouts, graded by trajectory items alone, must raise the rollouts' success above 90%
// within the recipe's iterations. If it does not, the GRPO implementation is wrong. It also checks
// that no iteration before that point had all its advantages at zero (an update that changes nothing).
// Work files go to .rehearsal/training/sanity (WORK=... elsewhere); the curve is printed and written
// to WORK/sanity.json. Exits 1 when a check fails.
import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RECIPE = path.join(ROOT, 'training/sanity/recipe.json');
const WORK = path.resolve(process.env.WORK ?? path.join(ROOT, '.rehearsal/training/sanity'));
/** Success the rollouts must pass, and the band around one half that counts as near chance. */
const GOAL = 0.9;
const CHANCE = [0.2, 0.8];

const readJsonl = async (file) =>
  (await fs.readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

/** One iteration's imagined episodes: success (reward 1) and the lookup each first act chose. */
async function iterationFigures(rowsFile) {
  const rows = await readJsonl(rowsFile);
  const best = new Map();
  const choices = { phone: 0, email: 0, other: 0 };
  for (const r of rows) {
    if (r.role !== 'act') continue;
    best.set(r.episode, Math.max(best.get(r.episode) ?? 0, r.reward ?? 0));
    if (r.messages.some((m) => m.role === 'assistant')) continue; // a later turn of the episode
    if (r.target.includes('"find_customer_by_phone"')) choices.phone++;
    else if (r.target.includes('"find_customer_by_email"')) choices.email++;
    else choices.other++;
  }
  const episodes = best.size;
  const successes = [...best.values()].filter((v) => v >= 1).length;
  return { episodes, success: episodes ? successes / episodes : 0, choices };
}

async function main() {
  await new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(ROOT, 'scripts/train-default.mjs'), '--fresh'],
      {
        cwd: ROOT,
        env: { ...process.env, RECIPE, WORK, MODEL: path.join(WORK, 'model') },
        stdio: 'inherit',
      },
    );
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`the sanity recipe failed (exit ${code})`)),
    );
  });
  const events = await readJsonl(path.join(WORK, 'grpo/events.jsonl'));
  const signal = new Map(
    events.filter((e) => e.event === 'rollouts').map((e) => [e.iteration, e.advantages]),
  );
  const curve = [];
  for (let it = 0; ; it++) {
    const file = path.join(
      WORK,
      'grpo/rollouts',
      `iter-${String(it).padStart(4, '0')}`,
      'rows.jsonl',
    );
    if (!existsSync(file)) break;
    curve.push({ iteration: it, ...(await iterationFigures(file)), advantages: signal.get(it) });
  }
  const manifest = JSON.parse(await fs.readFile(path.join(WORK, 'model/manifest.json'), 'utf8'));
  console.log('\niteration  episodes  success  phone  email  other  rows with a nonzero advantage');
  for (const c of curve)
    console.log(
      `${String(c.iteration).padStart(9)}  ${String(c.episodes).padStart(8)}  ${c.success.toFixed(2).padStart(7)}  ${String(c.choices.phone).padStart(5)}  ${String(c.choices.email).padStart(5)}  ${String(c.choices.other).padStart(5)}  ${c.advantages ? `${c.advantages.nonzero_rows}/${c.advantages.rows}` : '?'}`,
    );
  const reached = curve.find((c) => c.success > GOAL);
  const before = reached ? curve.filter((c) => c.iteration <= reached.iteration) : curve;
  const failures = [];
  if (!curve.length) failures.push('no GRPO iteration left its rollout rows');
  else if (!(curve[0].success >= CHANCE[0] && curve[0].success <= CHANCE[1]))
    failures.push(
      `the SFT policy is not near chance: its first rollouts succeeded ${curve[0].success.toFixed(2)} (expected ${CHANCE[0]}-${CHANCE[1]})`,
    );
  if (!reached)
    failures.push(
      `no iteration's imagined rollouts passed ${GOAL} success in ${curve.length} iterations (best ${Math.max(0, ...curve.map((c) => c.success)).toFixed(2)})`,
    );
  const dead = before.filter((c) => !c.advantages || c.advantages.nonzero_rows === 0);
  if (dead.length)
    failures.push(
      `iterations ${dead.map((c) => c.iteration).join(', ')} had every advantage at zero before the goal was reached`,
    );
  const report = {
    recipe: path.relative(ROOT, RECIPE),
    goal: GOAL,
    reachedAtIteration: reached?.iteration ?? null,
    greedyTestSuccess: manifest.scores.taskSuccess,
    curve,
    failures,
  };
  await fs.writeFile(path.join(WORK, 'sanity.json'), JSON.stringify(report, null, 2) + '\n');
  console.log(
    `\nimagined-rollout success ${curve[0]?.success.toFixed(2)} after SFT; ${reached ? `above ${GOAL} at iteration ${reached.iteration}` : `never above ${GOAL}`}; greedy success on the test split after GRPO ${manifest.scores.taskSuccess}`,
  );
  if (failures.length) {
    console.error(`GRPO sanity task FAILED:\n- ${failures.join('\n- ')}`);
    process.exit(1);
  }
  console.log('GRPO sanity task passed.');
}

main().catch((err) => {
  console.error(`measure:grpo-sanity failed: ${err.message}`);
  process.exit(1);
});
