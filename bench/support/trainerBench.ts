import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..', '..');

/** What `python -m trainer.bench` prints on its last line (the fields the bench cases read). */
export interface TrainerBenchResult {
  tokens_per_s: number;
  seconds_per_step: number;
  attention: string;
  allocator: string;
}

/** One `python -m trainer.bench <args>` process from the repository, with the environment the trainer's launches give it. */
export function runTrainerBench(
  python: string,
  args: string[],
  env: Record<string, string> = {},
): TrainerBenchResult {
  const out = execFileSync(python, ['-m', 'trainer.bench', ...args], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: REPO, OMP_WAIT_POLICY: 'PASSIVE', ...env },
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as TrainerBenchResult;
}
