import * as path from 'node:path';
import { errorMessage } from '../../base/errors';
import type { BfclCheck } from '../format/taskFile';
import { graderPython, runPythonGrader } from './pythonGrader';
import type { ItemResult } from './ruleChecks';
import type { EpisodeTranscript } from './transcript';

/** How long BFCL's checks of one episode may take (a long_context world is large). */
const GRADE_TIMEOUT_MS = 120_000;

/**
 * A BFCL-v4 multi-turn item (docs/task-format.md, BFCL-v4): the episode's calls, per user turn,
 * graded by `python -m trainer.bfcl.grade` (the studio's own code, which gives BFCL's
 * `multi_turn_checker` verdict: a test compares them on every record) on the installed bfcl-eval's
 * backends. Without the studio's Python environment the item is not evaluated, and says why.
 */
export async function evaluateBfcl(
  check: BfclCheck,
  transcript: EpisodeTranscript,
  options: { python?: () => string; baseDir?: string },
): Promise<ItemResult> {
  const found = graderPython(
    options.python,
    "BFCL's checks run in the studio's Python environment, which was not given (rehearse trainer setup)",
  );
  if ('result' in found) return found.result;
  const { python } = found;
  const input = JSON.stringify({
    record: check.record,
    ...(check.records
      ? { records: path.resolve(options.baseDir ?? process.cwd(), check.records) }
      : {}),
    ...(check.backend
      ? { backend: path.resolve(options.baseDir ?? process.cwd(), check.backend) }
      : {}),
    ground_truth: check.groundTruth,
    // One act per user turn: BFCL's verdict depends on the calls and their order, not on how the
    // model grouped them into acts.
    model: transcript.turns.map((t) => [t.calls.map((c) => [c.name, c.arguments])]),
  });
  try {
    const out = await runPythonGrader(
      python,
      'trainer.bfcl.grade',
      input,
      'BFCL',
      GRADE_TIMEOUT_MS,
    );
    const verdict = JSON.parse(out) as {
      valid?: unknown;
      message?: unknown;
      error?: unknown;
      irrelevance?: unknown;
    };
    if (typeof verdict.error === 'string')
      return { passed: null, detail: `not evaluated: ${verdict.error}` };
    if (typeof verdict.valid !== 'boolean')
      return { passed: null, detail: `not evaluated: the grader answered ${out.slice(0, 200)}` };
    const extra = Array.isArray(verdict.irrelevance) ? verdict.irrelevance.join(', ') : '';
    if (verdict.valid)
      return extra
        ? {
            passed: true,
            detail: `passed; calls in turn(s) ${extra}, whose ground truth is empty (BFCL's irrelevance check: BFCL's runner does not apply it)`,
          }
        : { passed: true };
    return {
      passed: false,
      detail: typeof verdict.message === 'string' ? verdict.message : 'failed',
    };
  } catch (err) {
    return { passed: null, detail: `not evaluated: ${errorMessage(err)}` };
  }
}
