import { resolveTrainerPython } from '../../src/core/training/pythonEnv';
import { benchSize, registerBenchCase, timingStats } from '../registry';
import type { TrainerBenchResult } from '../support/trainerBench';
import { runTrainerBench } from '../support/trainerBench';

const PYTHON = process.env.PYTHON ?? resolveTrainerPython().python;
/** The shape of the measurement: a default-policy-sized model, one micro-batch of 4 rows of 1,024 tokens, eager attention. */
const ARGS = benchSize(
  ['--arch', '5m', '--seq', '1024', '--batch', '4', '--micro', '4', '--steps', '5'],
  ['--arch', 'tiny', '--seq', '128', '--batch', '2', '--micro', '2', '--steps', '3'],
).concat(['--threads', '2', '--attention', 'eager']);

/** One `trainer.bench` process with glibc's allocator as it is (`default`) or as the trainer sets it (`tuned`). */
function trainerBench(allocator: 'default' | 'tuned'): TrainerBenchResult {
  const result = runTrainerBench(PYTHON, ARGS, { REHEARSAL_MALLOC: allocator });
  if (result.allocator !== allocator)
    throw new Error(`trainer.bench ran with allocator ${result.allocator}, not ${allocator}`);
  return result;
}

registerBenchCase({
  name: 'trainer: SFT step, allocator tuned vs glibc default',
  description:
    "python3 -m trainer.bench (4.9M parameters, 4 rows × 1,024 tokens, 2 threads, eager attention; median of steps 3-5), glibc default and the trainer's allocator (trainer/allocator.py) in alternating processes",
  targets: [{ fact: 'tuned / default seconds per step', atMost: 0.8 }],
  run(settings) {
    const pairs = settings.tiny ? 1 : Math.max(2, Math.min(4, Math.round(settings.runs / 5)));
    const runs: Record<'default' | 'tuned', TrainerBenchResult[]> = { default: [], tuned: [] };
    for (let i = 0; i < pairs; i++)
      for (const a of ['default', 'tuned'] as const) runs[a].push(trainerBench(a));
    const median = (xs: number[]) => timingStats(xs).medianMs;
    const step = (a: 'default' | 'tuned') => median(runs[a].map((r) => r.seconds_per_step * 1000));
    return {
      baseline: 'SFT step, glibc default',
      measurements: {
        'SFT step, glibc default': timingStats(runs.default.map((r) => r.seconds_per_step * 1000)),
        'SFT step, allocator tuned': timingStats(runs.tuned.map((r) => r.seconds_per_step * 1000)),
      },
      facts: {
        'tokens/s, glibc default': median(runs.default.map((r) => r.tokens_per_s)),
        'tokens/s, allocator tuned': median(runs.tuned.map((r) => r.tokens_per_s)),
        'tuned / default seconds per step': Number((step('tuned') / step('default')).toFixed(3)),
        'process pairs': pairs,
      },
    };
  },
});
