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
/** The default policy's model, one thread. */
const ARGS = benchSize(['--arch', 'default'], ['--arch', 'tiny']).concat([
  '--rows',
  SHAPES,
  '--threads',
  '1',
  '--packing',
  'both',
]);
/** Steps of 8 rows; steps of one row (a tenth of the time each, so more of them). */
const STEPS = benchSize({ eight: 10, one: 40 }, { eight: 3, one: 3 });

/**
 * One `trainer.bench` process running the padded and the packed engine side by side, on one rank's
 * share of a default SFT step (8 of its 16 rows) in micro-batches of `micro` rows, or with `rows` 1 on
 * one row a step (nothing to pack: both take the padded path).
 */
function sideBySide(
  micro: number,
  rows = 8,
): TrainerBenchResult & Required<Pick<TrainerBenchResult, 'modes'>> {
  const steps = rows === 1 ? STEPS.one : STEPS.eight;
  const result = runTrainerBench(PYTHON, [
    ...ARGS,
    ...['--batch', String(rows), '--micro', String(micro), '--steps', String(steps)],
  ]);
  if (!result.modes || result.loss_difference === undefined)
    throw new Error('trainer.bench --packing both reported no modes or loss_difference');
  return { ...result, modes: result.modes };
}

const ratio = (r: { modes: TrainerBenchResult['modes'] & object }) =>
  Number((r.modes.packed.tokens_per_s / r.modes.padded.tokens_per_s).toFixed(3));

registerBenchCase({
  name: 'trainer: SFT step, packed vs padded rows',
  description:
    "python -m trainer.bench on the default recipe's rows (512 row shapes of its SFT data, random tokens; the default policy's 2.2M-parameter model, 8 rows a step, 1 thread, sdpa; median of steps 3-10, 3-40 at one row a step): the padded and the packed engine side by side in one process, alternating; one micro-batch of the 8 rows (the recipe's micro_batch_size), then micro-batches of 2 (the recipe's before), then one row a step (nothing to pack)",
  targets: [
    { fact: 'packed / padded real tokens/s, 8-row micro-batches', atLeast: 1.5 },
    { fact: 'loss difference packed vs padded (same batch, same weights)', atMost: 1e-5 },
  ],
  run(): BenchCaseResult {
    const eight = sideBySide(8);
    const two = sideBySide(2);
    const one = sideBySide(1, 1);
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
        'packed / padded real tokens/s, 1 row a step (nothing packs)': ratio(one),
        'loss difference, 1 row a step (0: the same computation)': one.loss_difference!,
        'loss difference packed vs padded (same batch, same weights)': Math.max(
          eight.loss_difference!,
          two.loss_difference!,
          one.loss_difference!,
        ),
      },
    };
  },
});
