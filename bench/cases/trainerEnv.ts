import { spawnSync } from 'node:child_process';
import { resolveTrainerPython } from '../../src/core/training/pythonEnv';
import type { BenchCaseResult } from '../registry';
import { benchSize, registerBenchCase, timingStats } from '../registry';
import type { TrainerBenchResult } from '../support/trainerBench';
import { runTrainerBench } from '../support/trainerBench';

/**
 * The environment the trainer ran in before the switch to PyPI: Debian 12's python3-torch 1.13 (no
 * fused attention) with python3-jinja2, at /usr/bin/python3 (`apt-get install python3-torch
 * python3-jinja2`), or $BENCH_OLD_PYTHON.
 */
const OLD_PYTHON = process.env.BENCH_OLD_PYTHON ?? '/usr/bin/python3';
/**
 * Recorded on this machine before the switch, with the old environment (issue 24): attention forward
 * + backward 0.357 s under torch 1.13 eager. Used only when the old environment cannot be run.
 */
const RECORDED_OLD =
  "torch 1.13 no longer installable here: see the issue's recorded 0.357 s attention step";
/** The default recipe's shapes: a 4.6M-parameter model, micro-batches of 2 rows × 1,024 tokens, one thread per process. */
const ARGS = benchSize(
  ['--arch', 'default', '--seq', '1024', '--batch', '2', '--micro', '2', '--steps', '6'],
  ['--arch', 'tiny', '--seq', '128', '--batch', '2', '--micro', '2', '--steps', '3'],
).concat(['--threads', '1']);

function torchVersion(python: string): string | undefined {
  const r = spawnSync(python, ['-c', 'import torch, jinja2; print(torch.__version__)'], {
    encoding: 'utf8',
  });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** The step times of trainer.bench processes, in milliseconds. */
function ms(rs: TrainerBenchResult[]) {
  return timingStats(rs.map((r) => r.seconds_per_step * 1000));
}

function trainerBench(python: string, attention: 'eager' | 'sdpa'): TrainerBenchResult {
  return runTrainerBench(python, [...ARGS, '--attention', attention], {
    OPENBLAS_NUM_THREADS: '1',
  });
}

registerBenchCase({
  name: 'trainer: SFT step, torch 1.13 eager vs the trainer environment',
  description:
    "python -m trainer.bench at the default recipe's shapes (2 rows × 1,024 tokens, 1 thread; median of steps 3-6): Debian's torch 1.13 with eager attention, then the studio's environment (torch 2.13, scaled_dot_product_attention), in alternating processes",
  targets: [{ fact: 'new / old seconds per step', atMost: 0.5 }],
  run(settings): BenchCaseResult {
    const newPython = resolveTrainerPython().python;
    if (settings.tiny) {
      // The old environment is not on CI's machines: at a tiny size only the trainer's own runs.
      const step = trainerBench(newPython, 'sdpa');
      return {
        measurements: { 'SFT step, the trainer environment': ms([step]) },
        facts: { 'tokens/s, new': step.tokens_per_s },
      };
    }
    const oldTorch = torchVersion(OLD_PYTHON);
    if (!oldTorch?.startsWith('1.'))
      throw new Error(`${OLD_PYTHON} has no torch 1.x (${RECORDED_OLD}); set BENCH_OLD_PYTHON`);
    const pairs = Math.max(2, Math.min(4, Math.round(settings.runs / 5)));
    const old: TrainerBenchResult[] = [];
    const now: TrainerBenchResult[] = [];
    for (let i = 0; i < pairs; i++) {
      old.push(trainerBench(OLD_PYTHON, 'eager'));
      now.push(trainerBench(newPython, 'sdpa'));
    }
    const median = (xs: number[]) => timingStats(xs).medianMs;
    const oldName = `SFT step, torch ${oldTorch} eager`;
    const newName = `SFT step, torch ${torchVersion(newPython)} ${now[0].attention}`;
    return {
      baseline: oldName,
      measurements: { [oldName]: ms(old), [newName]: ms(now) },
      facts: {
        'tokens/s, old': median(old.map((r) => r.tokens_per_s)),
        'tokens/s, new': median(now.map((r) => r.tokens_per_s)),
        'new / old seconds per step': Number((ms(now).medianMs / ms(old).medianMs).toFixed(3)),
        'process pairs': pairs,
      },
    };
  },
});
