import * as path from 'node:path';
import { resolveTrainerPython } from '../../src/core/training/pythonEnv';
import type { BenchCaseResult } from '../registry';
import { benchSize, registerBenchCase, timingStats } from '../registry';
import type { TrainerBenchResult } from '../support/trainerBench';
import { REPO, runTrainerBench } from '../support/trainerBench';

const PYTHON = process.env.PYTHON ?? resolveTrainerPython().python;
/**
 * The shapes (prompt, target and trained history tokens) of 512 rows of the default recipe's SFT data
 * (`npm run train:default`'s rows/demonstrations.jsonl, 8,773 act and rehearse rows, tokenized by
 * models/default's tokenizer, drawn with seed 0); the bench fills them with random tokens.
 */
const SHAPES = path.join(REPO, 'bench', 'data', 'default-sft-row-shapes.jsonl');
/** The default policy's model on one rank's share of a default SFT step (8 of 16 rows), one thread. */
const ARGS = benchSize(
  ['--arch', 'default', '--steps', '10'],
  ['--arch', 'tiny', '--steps', '3'],
).concat(['--rows', SHAPES, '--batch', '8', '--threads', '1', '--packing', 'both']);

/** One `trainer.bench` process running the padded and the packed engine side by side. */
function sideBySide(
  micro: number,
): TrainerBenchResult & Required<Pick<TrainerBenchResult, 'modes'>> {
  const result = runTrainerBench(PYTHON, [...ARGS, '--micro', String(micro)]);
  if (!result.modes || result.loss_difference === undefined)
    throw new Error('trainer.bench --packing both reported no modes or loss_difference');
  return { ...result, modes: result.modes };
}

const ratio = (r: { modes: TrainerBenchResult['modes'] & object }) =>
  Number((r.modes.packed.tokens_per_s / r.modes.padded.tokens_per_s).toFixed(3));

registerBenchCase({
  name: 'trainer: SFT step, packed vs padded rows',
  description:
    "python -m trainer.bench on the default recipe's rows (512 row shapes of its SFT data, random tokens; the default policy's 2.2M-parameter model, 8 rows a step, 1 thread, sdpa; median of steps 3-10): the padded and the packed engine side by side in one process, alternating; one micro-batch of the 8 rows, then the recipe's micro-batches of 2",
  targets: [
    { fact: 'packed / padded real tokens/s, 8-row micro-batches', atLeast: 1.5 },
    { fact: 'loss difference packed vs padded (same batch, same weights)', atMost: 1e-5 },
  ],
  run(): BenchCaseResult {
    const eight = sideBySide(8);
    const two = sideBySide(2);
    const step = (r: TrainerBenchResult, mode: 'padded' | 'packed') =>
      r.modes![mode].step_seconds.map((s) => s * 1000);
    return {
      baseline: 'SFT step, padded, 8-row micro-batches',
      measurements: {
        'SFT step, padded, 8-row micro-batches': timingStats(step(eight, 'padded')),
        'SFT step, packed, 8-row micro-batches': timingStats(step(eight, 'packed')),
        'SFT step, padded, 2-row micro-batches': timingStats(step(two, 'padded')),
        'SFT step, packed, 2-row micro-batches': timingStats(step(two, 'packed')),
      },
      facts: {
        'real tokens/s, padded, 8-row micro-batches': eight.modes.padded.tokens_per_s,
        'real tokens/s, packed, 8-row micro-batches': eight.modes.packed.tokens_per_s,
        'packed / padded real tokens/s, 8-row micro-batches': ratio(eight),
        'real tokens/s, padded, 2-row micro-batches': two.modes.padded.tokens_per_s,
        'real tokens/s, packed, 2-row micro-batches': two.modes.packed.tokens_per_s,
        'packed / padded real tokens/s, 2-row micro-batches': ratio(two),
        'loss difference packed vs padded (same batch, same weights)': Math.max(
          eight.loss_difference!,
          two.loss_difference!,
        ),
      },
    };
  },
});
