import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { LineSplitter } from '../../core/base/lines';
import { sayError } from './terminal';

/** How {@link runProgram} runs a program. */
export interface RunProgramOptions {
  /** Each line of stdout, as it arrives. */
  onLine?: (line: string) => void;
  /** Variables added to the environment (which also gets PYTHONPATH and OMP_WAIT_POLICY). */
  env?: Record<string, string>;
  /** The folder it runs in. */
  cwd: string;
  /** Each stderr line goes to this recipe's stderr as well (VERBOSE=1). */
  verbose?: boolean;
}

/** Lines of an output stream, split as they arrive; the last 30 are kept for an error message. */
function lineReader(tail: string[], each: (line: string) => void): LineSplitter {
  return new LineSplitter((line) => {
    tail.push(line);
    if (tail.length > 30) tail.shift();
    each(line);
  });
}

/**
 * The recipes' one way to start a program: an argument vector (never a shell), with the trainer's
 * Python path and a passive OpenMP wait (so waiting trainer threads do not spin on shared cores).
 * Resolves with its whole stdout; rejects with the last lines of its output when it fails.
 */
export function runProgram(
  command: string,
  args: readonly string[],
  options: RunProgramOptions,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, PYTHONPATH: options.cwd, OMP_WAIT_POLICY: 'PASSIVE', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    const outLines = lineReader(tail, (line) => options.onLine?.(line));
    const errLines = lineReader(tail, (line) => options.verbose && sayError(line));
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      outLines.push(chunk);
    });
    child.stderr.on('data', (chunk: string) => errLines.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else {
        const what = `${path.basename(command)} ${args.slice(0, 3).join(' ')}`;
        reject(new Error(`${what} exited ${code}:\n${tail.join('\n')}`));
      }
    });
  });
}
