import type { Difference, Evaluation } from './stats';
import { difference } from './stats';

/** The evaluations every comparison of measure:envace is made from. */
export interface Measured {
  none: Evaluation;
  arms: { imagined: Evaluation[]; real: Evaluation[] };
  /** POLICY at budget 0; null when neither B nor C was measured. */
  budget0: Evaluation | null;
  recipeStart: Evaluation | null;
  privateRuns: { budget: number; order: string; evaluations: Evaluation[] }[];
}

/** The paired differences between arms, for success and for reward. */
export function differences(m: Measured, budgets: readonly number[]): Difference[] {
  const privateOf = (budget: number, order: string) =>
    m.privateRuns.find((p) => p.budget === budget && p.order === order)?.evaluations ?? [];
  const found: Difference[] = [];
  for (const metric of ['success', 'reward'] as const) {
    found.push(
      difference('imagined-vs-none', metric, m.arms.imagined, [m.none]),
      difference('imagined-vs-real', metric, m.arms.imagined, m.arms.real),
      difference('real-vs-none', metric, m.arms.real, [m.none]),
    );
    const budget0 = m.budget0;
    if (!budget0) continue;
    if (m.recipeStart)
      found.push(
        difference('recipe-grpo-vs-start', metric, [budget0], [m.recipeStart]),
        difference('policy-vs-sft', metric, [budget0], [m.none]),
      );
    for (const budget of budgets)
      found.push(
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
  return found;
}
