import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

/** The repository root (the bench runs from `out/bench/support`). */
export const REPO = path.resolve(__dirname, '..', '..', '..');

/** One engine's figures in a `--packing both` run of `python -m trainer.bench`. */
export interface TrainerBenchMode {
  tokens_per_s: number;
  seconds_per_step: number;
  /** Each timed step's seconds. */
  step_seconds: number[];
}

/** What `python -m trainer.bench` prints on its last line (the fields the bench cases read). */
export interface TrainerBenchResult {
  tokens_per_s: number;
  seconds_per_step: number;
  attention: string;
  allocator: string;
  /** With `--packing both`: the padded and the packed engine's figures, measured side by side. */
  modes?: { padded: TrainerBenchMode; packed: TrainerBenchMode };
  /** With `--packing both`: |packed - padded| mean NLL of the first step's batch on the same weights. */
  loss_difference?: number;
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
