import { spawn } from 'node:child_process';
import { errorMessage } from '../../base/errors';
import { studioRoot } from '../../base/studioRoot';
import type { ItemResult } from './ruleChecks';

/** The most a grader may print (its verdict is one short JSON line). */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/**
 * Runs a benchmark's grader module (`python -m <module>`, from the studio's folder) with `input` on
 * stdin and resolves its last line of stdout; rejects when it ends other than with exit 0, naming
 * `what` (`BFCL`, `τ²`) and the last line of its stderr. `abort` kills it (τ²'s user simulator,
 * asked mid-episode, dies with its episode). `env` adds variables to its environment (a judge's key,
 * which it reads by the variable's name: never on its command line or stdin).
 */
export function runPythonGrader(
  python: string,
  module: string,
  input: string,
  what: string,
  timeoutMs: number,
  abort?: AbortSignal,
  env?: NodeJS.ProcessEnv,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-m', module], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...env, PYTHONPATH: studioRoot(), OMP_WAIT_POLICY: 'PASSIVE' },
      timeout: timeoutMs,
      ...(abort ? { signal: abort } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (stdout.length > MAX_OUTPUT_BYTES) child.kill();
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(stdout.trim().split('\n').at(-1) ?? '');
      else
        reject(
          new Error(
            `the ${what} grader (${python} -m ${module}) ended with ${signal ?? `exit ${code}`}: ${stderr.trim().split('\n').at(-1) ?? ''}`,
          ),
        );
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/**
 * The studio's Python for a benchmark's grader, or the item's verdict when there is none: not
 * evaluated, saying why (`missing`: what the grader needs and how to set it up).
 */
export function graderPython(
  python: (() => string) | undefined,
  missing: string,
): { python: string } | { result: ItemResult } {
  try {
    const found = python?.();
    if (found) return { python: found };
  } catch (err) {
    return { result: { passed: null, detail: `not evaluated: ${errorMessage(err)}` } };
  }
  return { result: { passed: null, detail: `not evaluated: ${missing}` } };
}
