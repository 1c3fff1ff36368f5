/** One iteration's imagined episodes: success (reward 1) and the lookup each first act chose. */
export interface IterationFigures {
  episodes: number;
  success: number;
  choices: { phone: number; email: number; other: number };
}

/** A GRPO `rollouts` event's count of rows with a nonzero advantage. */
export interface Advantages {
  rows: number;
  nonzero_rows: number;
}

/** One point of the sanity curve. */
export interface CurvePoint extends IterationFigures {
  iteration: number;
  advantages?: Advantages;
}

/** A rollout row of GRPO's rows.jsonl, as far as the sanity task reads it. */
export interface RolloutRow {
  role: string;
  episode: string;
  reward?: number;
  messages: { role: string }[];
  target: string;
}

/** Success the rollouts must pass, and the band around one half that counts as near chance. */
export const GOAL = 0.9;
export const CHANCE: readonly [number, number] = [0.2, 0.8];

/** The figures of one iteration's rows. */
export function iterationFigures(rows: readonly RolloutRow[]): IterationFigures {
  const best = new Map<string, number>();
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

/** The first iteration whose rollouts passed the goal, if any. */
export function goalReached(curve: readonly CurvePoint[]): CurvePoint | undefined {
  return curve.find((c) => c.success > GOAL);
}

/**
 * What is wrong with a sanity curve: no iteration; an SFT policy not near chance; the goal never
 * passed; an iteration up to the goal with every advantage at zero (an update that changes nothing).
 */
export function sanityFailures(curve: readonly CurvePoint[]): string[] {
  const reached = goalReached(curve);
  const before = reached ? curve.filter((c) => c.iteration <= reached.iteration) : curve;
  const failures: string[] = [];
  if (!curve.length) failures.push('no GRPO iteration left its rollout rows');
  else if (!(curve[0].success >= CHANCE[0] && curve[0].success <= CHANCE[1]))
    failures.push(
      `the SFT policy is not near chance: its first rollouts succeeded ${curve[0].success.toFixed(2)} (expected ${CHANCE[0]}-${CHANCE[1]})`,
    );
  if (!reached) {
    const best = Math.max(0, ...curve.map((c) => c.success)).toFixed(2);
    failures.push(
      `no iteration's imagined rollouts passed ${GOAL} success in ${curve.length} iterations (best ${best})`,
    );
  }
  const dead = before.filter((c) => !c.advantages || c.advantages.nonzero_rows === 0);
  if (dead.length)
    failures.push(
      `iterations ${dead.map((c) => c.iteration).join(', ')} had every advantage at zero before the goal was reached`,
    );
  return failures;
}

/** The curve as a table, one line per iteration. */
export function curveTable(curve: readonly CurvePoint[]): string {
  const lines = [
    'iteration  episodes  success  phone  email  other  rows with a nonzero advantage',
  ];
  for (const c of curve) {
    const cells = [
      String(c.iteration).padStart(9),
      String(c.episodes).padStart(8),
      c.success.toFixed(2).padStart(7),
      ...[c.choices.phone, c.choices.email, c.choices.other].map((n) => String(n).padStart(5)),
      c.advantages ? `${c.advantages.nonzero_rows}/${c.advantages.rows}` : '?',
    ];
    lines.push(cells.join('  '));
  }
  return lines.join('\n');
}
