import type { CheckVerdict } from '../../trace/format/schema';
import type { CheckSpec, TaskFile } from '../format/taskFile';
import type { Judge } from './judge';
import type { ItemResult } from './ruleChecks';
import { evaluateAnswer, evaluateCall, evaluateNoCall, evaluateState } from './ruleChecks';
import type { EpisodeTranscript } from './transcript';
import { evaluateBfcl } from './bfclCheck';
import { evaluateTau2 } from './tau2Check';

/** An episode's grade, the shape `episode.end` records. */
export interface Grade {
  /**
   * Weighted share of passed items among the evaluated ones, in [0, 1]: Σ weight·passed / Σ weight
   * over items with `passed` true or false. Items not evaluated (`passed: null`) count in neither
   * sum. Null when no item was evaluated. (EnvACE's rule, `runner/envaceGrading.ts`, gives its own
   * score here, which may exceed 1.)
   */
  reward: number | null;
  /** Every evaluated item passed (and at least one was evaluated); null when none was. */
  success: boolean | null;
  checks: CheckVerdict[];
  /** How many items were not evaluated. */
  notEvaluated: number;
}

/** Why a judge item is not evaluated when no judge was given (the CLI's `--judge`, `rehearsal.judge.endpoint`). */
export const NO_JUDGE = 'no judge endpoint is configured';

/** Options of {@link gradeEpisode}. */
export interface GradeOptions {
  /** Evaluates judge items; without it they are `passed: null` (not evaluated). */
  judge?: Judge;
  /**
   * The studio's Python environment's interpreter, which grades `bfcl` and `tau2` items; without it they are
   * not evaluated. May throw the coded error that says to set the environment up.
   */
  python?: () => string;
  /** The task file's folder (a `bfcl` item's `records`, a `tau2` item's `tasks` are relative to it). */
  baseDir?: string;
}

/** The id of a check: its own, or `check-<index>`. */
export function checkId(check: CheckSpec, index: number): string {
  return check.id ?? `check-${index}`;
}

async function evaluate(
  check: CheckSpec,
  transcript: EpisodeTranscript,
  options: GradeOptions,
): Promise<ItemResult> {
  switch (check.kind) {
    case 'state':
      return evaluateState(check, transcript);
    case 'call':
      return evaluateCall(check, transcript);
    case 'no_call':
      return evaluateNoCall(check, transcript);
    case 'answer':
      return evaluateAnswer(check, transcript);
    case 'judge':
      return options.judge
        ? options.judge.evaluate(check, transcript)
        : { passed: null, detail: `not evaluated: ${NO_JUDGE}` };
    case 'bfcl':
      return evaluateBfcl(check, transcript, options);
    case 'tau2':
      return evaluateTau2(check, transcript, options);
  }
}

/**
 * Grades an episode against the task's checklist by the studio's rule: the weighted share of passed
 * items, in [0, 1]. Every item keeps its verdict. EnvACE's per-turn rule is `runner/envaceGrading.ts`.
 */
export async function gradeEpisode(
  task: TaskFile,
  transcript: EpisodeTranscript,
  options: GradeOptions = {},
): Promise<Grade> {
  return scoreVerdicts(await gradeItems(task, transcript, options));
}

/** The verdicts of the task's items (those `include` keeps, by index), in checklist order. */
export async function gradeItems(
  task: TaskFile,
  transcript: EpisodeTranscript,
  options: GradeOptions = {},
  include: (index: number) => boolean = () => true,
): Promise<CheckVerdict[]> {
  const checks: CheckVerdict[] = [];
  for (let i = 0; i < task.checks.length; i++) {
    if (!include(i)) continue;
    const check = task.checks[i];
    const r = await evaluate(check, transcript, options);
    checks.push({
      id: checkId(check, i),
      kind: check.kind,
      weight: check.weight ?? 1,
      passed: r.passed,
      ...(r.score !== undefined ? { score: r.score } : {}),
      ...(r.detail ? { detail: r.detail } : {}),
    });
  }
  return checks;
}

/**
 * The grade of an episode that ended on an error before finishing (status `failed` or `limit`: a
 * turn that did not parse, a limit, a tool error that ends episodes, a policy failure): reward 0 and
 * no success, whatever its checks say. Its verdicts are kept for diagnosis. Without this, checks that
 * an episode passes by doing nothing ("nothing changed", "no forbidden call") gave a failed episode a
 * high reward (0.83), as high as a finished one, and GRPO groups could not tell them apart.
 */
export function gradeOfFailedEpisode(grade: Grade): Grade {
  return { ...grade, reward: 0, success: false };
}

/**
 * The grade of an episode without its state items: each becomes `passed: null` (not evaluated) with
 * `reason`, and the rest is scored again. It is how an imagined trajectory is graded (it has no
 * real state), and how the grade of a real episode by its trajectory items alone is read.
 */
export function withoutStateItems(grade: Grade, reason: string): Grade {
  return scoreVerdicts(
    grade.checks.map((c) =>
      c.kind === 'state' ? { ...c, passed: null, detail: `not evaluated: ${reason}` } : c,
    ),
  );
}

/** Reward and success of a list of verdicts (see {@link Grade}). */
export function scoreVerdicts(checks: CheckVerdict[]): Grade {
  let total = 0;
  let gained = 0;
  let evaluated = 0;
  let allPassed = true;
  for (const c of checks) {
    if (c.passed === null) continue;
    evaluated++;
    total += c.weight;
    if (c.passed) gained += c.weight;
    else allPassed = false;
  }
  const notEvaluated = checks.length - evaluated;
  if (evaluated === 0) return { reward: null, success: null, checks, notEvaluated };
  const reward = total > 0 ? Math.round((gained / total) * 1e6) / 1e6 : allPassed ? 1 : 0;
  return { reward, success: allPassed, checks, notEvaluated };
}
