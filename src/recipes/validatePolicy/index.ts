import { writeText } from '../shared/files';
import { rehearse } from '../shared/studio';
import { say } from '../shared/terminal';

/** The scores GRPO's validation compares (docs/training-runs.md, `validation`). */
export interface ValidationScores {
  success: number;
  meanReward: number;
  toolCallParseValidity: number;
  rehearsalJsonValidity: number;
}

/** The report figures of `rehearse run --json` that validation reads. */
interface RunReport {
  successes: number;
  graded: number;
  meanReward: number | null;
  actParseValid: number;
  turns: number;
  rehearsalParseValid: number;
  rehearsed: number;
}

/** The validation scores of a run's report (a share of nothing is 0). */
export function validationScores(report: RunReport): ValidationScores {
  const share = (n: number, d: number) => (d ? n / d : 0);
  return {
    success: share(report.successes, report.graded),
    meanReward: report.meanReward ?? 0,
    toolCallParseValidity: share(report.actParseValid, report.turns),
    rehearsalJsonValidity: share(report.rehearsalParseValid, report.rehearsed),
  };
}

/** The usage line of `validate-policy`. */
export const VALIDATE_USAGE = 'validate-policy <tasks> <model_dir> <scores.json> <runs_dir>';

/**
 * The GRPO stage's validation command (train:default): plays held-out tasks with an exported policy
 * in shadow mode, greedy, and writes the scores the trainer compares as JSON.
 */
export async function validatePolicy(args: readonly string[]): Promise<void> {
  const [tasks, modelDir, out, runsDir] = args;
  if (!runsDir) throw new Error(`usage: ${VALIDATE_USAGE}`);
  const stdout = await rehearse(
    ...['run', tasks, '--policy', modelDir, '--out', runsDir, '--no-progress', '--json'],
  );
  const scores = validationScores((JSON.parse(stdout) as { report: RunReport }).report);
  await writeText(out, JSON.stringify(scores) + '\n');
  say(`validation: ${JSON.stringify(scores)}`);
}
