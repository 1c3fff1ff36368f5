import { counted } from '../core/base/counted';
import { notEvaluatedText } from '../core/report/reportText';
import { StudioError } from '../core/base/errors';
import { NO_JUDGE } from '../core/tasks/checks/grade';
import type { Judge } from '../core/tasks/checks/judge';
import { CLI_JUDGE_NAMES, JUDGE_API_KEY_ENV, openJudge } from '../core/tasks/checks/judgeEndpoint';
import type { NotEvaluatedChecks } from '../core/tasks/checks/notEvaluated';

/** Options that name the judge of `judge` items on the command line. */
export interface JudgeArgs {
  judge?: string;
  judgeModel?: string;
}

/** `--judge`'s help. */
export const JUDGE_HELP = `an OpenAI-compatible endpoint (base URL, e.g. http://127.0.0.1:8000/v1) that judges the tasks' judge items and τ²'s natural-language assertions; its API key from $${JUDGE_API_KEY_ENV}, each verdict limited to 60 s (without it, judge items are not evaluated)`;

/** `--judge-model`'s help. */
export const JUDGE_MODEL_HELP =
  "the judge endpoint's model (default: the one model it lists; one must be named where it serves several)";

/**
 * The judge `--judge` and `--judge-model` name, with its key from the environment; undefined without
 * `--judge`. Throws a coded error for a URL that is not one, or an endpoint whose model cannot be chosen.
 */
export async function openJudgeArg(
  args: JudgeArgs,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Judge | undefined> {
  if (args.judge === undefined) {
    if (args.judgeModel !== undefined)
      throw new StudioError('USAGE', '--judge-model goes with --judge <url> (the judge endpoint).');
    return undefined;
  }
  const { judge } = await openJudge({
    endpoint: args.judge,
    model: args.judgeModel,
    apiKey: env[JUDGE_API_KEY_ENV] || undefined,
    names: CLI_JUDGE_NAMES,
  });
  return judge;
}

/**
 * One line per reason judge items were not evaluated: `3 judge items not evaluated: no judge endpoint
 * is configured (--judge <url>)`, with what the judge answered or the error its request met (the
 * first item's, where they differ). None when every judge item was evaluated.
 */
export function judgeSummaryLines(groups: readonly NotEvaluatedChecks[]): string[] {
  return groups
    .filter((g) => g.kind === 'judge')
    .map(
      (g) =>
        `${counted(g.count, 'judge item')} not evaluated: ${notEvaluatedText(g).replace(/\s+/g, ' ')}${g.reason === NO_JUDGE ? ' (--judge <url>)' : ''}`,
    );
}
