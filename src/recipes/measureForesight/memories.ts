import type { ToolResultContent } from '../../core/fidelity/responseValue';
import { imaginedOutcome, outcomesMemory } from '../../core/runner/outcomesMemory';
import type { EpisodeTranscript, TranscriptCall } from '../../core/tasks/checks/transcript';
import type { DatasetRow } from '../../core/training/datasetRow';
import { prng } from '../measureEnvace/stats';

// The memory-reading rows' memories (issue 41, part 3): an `outcomes` memory built from the true
// outcome of each task's write, as a world model that knows the rule would imagine it, with a share
// of them flipped to the opposite, so that reading the memory pays and trusting it blindly does not.

/** A write's verdict: the bank made it, or refused it. */
export type Verdict = 'ok' | 'refused';

/** One logged write: the call and the real server's response. */
export interface LoggedWrite {
  call: TranscriptCall & { outcome: { response: ToolResultContent } };
  verdict: Verdict;
}

/** A logged call's verdict, read as private rehearsal reads an imagined one (`imaginedOutcome`). */
export function verdictOf(call: TranscriptCall): Verdict | 'unknown' {
  const kind = imaginedOutcome(call).kind;
  return kind === 'unknown' ? 'unknown' : kind;
}

/**
 * The `outcomes` memory a committed episode would read after `budget` imagined attempts that each
 * made this write with this response: private rehearsal's own function over them (ids and argument
 * values left out; identical lines counted, `(x2)`).
 */
export function memoryOfWrite(write: LoggedWrite, budget: number): string {
  const transcript: EpisodeTranscript = {
    turns: [{ user: '', calls: [write.call] }],
    snapshot: { ok: false, error: 'not taken' },
  };
  return outcomesMemory(Array.from({ length: budget }, () => transcript));
}

/**
 * Which of `n` items are flipped: exactly `round(rate × n)` of them, drawn by a seeded shuffle, so
 * the rate is what the recipe says up to rounding and the same on every run.
 */
export function flippedIndices(n: number, rate: number, seed: number): Set<number> {
  const random = prng(seed);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return new Set(order.slice(0, Math.round(rate * n)));
}

/** One task's memory line of the memory file, with what it says against the truth. */
export interface TaskMemory {
  task: string;
  memory: string;
  truth: Verdict;
  flipped: boolean;
}

/**
 * The memories of the memory-reading tasks: each built from its own logged write (the true outcome,
 * `writes` by the task's seed), or, when flipped, from a logged write of the other verdict (drawn by
 * the seeded source, its ids stripped like any). Tasks without a logged write are left out.
 */
export function taskMemories(
  tasks: readonly { id: string; seed: number }[],
  writes: ReadonlyMap<number, LoggedWrite>,
  options: { flipRate: number; budget: number; seed: number },
): TaskMemory[] {
  const known = tasks.filter((t) => writes.has(t.seed));
  const flipped = flippedIndices(known.length, options.flipRate, options.seed);
  const byVerdict = (v: Verdict) => [...writes.values()].filter((w) => w.verdict === v);
  const others = { ok: byVerdict('refused'), refused: byVerdict('ok') };
  const random = prng(options.seed + 1);
  return known.map((t, i) => {
    const own = writes.get(t.seed)!;
    const flip = flipped.has(i) && others[own.verdict].length > 0;
    const pool = others[own.verdict];
    const write = flip ? pool[Math.floor(random() * pool.length)] : own;
    return {
      task: t.id,
      memory: memoryOfWrite(write, options.budget),
      truth: own.verdict,
      flipped: flip,
    };
  });
}

/** What a memory says of its write: `ok`, `refused`, or neither (no write line). */
export function memorySays(memory: string): Verdict | undefined {
  if (/ -> refused\b/.test(memory)) return 'refused';
  if (/ -> ok\b/.test(memory)) return 'ok';
  return undefined;
}

/** How often the memory-reading rows' memories say the opposite of their task's true outcome. */
export interface FlipCount {
  rows: number;
  flipped: number;
  rate: number;
}

/**
 * The flip rate of exported rows: each row read with a memory (id `.../memory-N`), its memory (the
 * last system message) against its task's true outcome in `truth`.
 */
export function flipRateOf(
  rows: readonly DatasetRow[],
  truth: ReadonlyMap<string, Verdict>,
): FlipCount {
  let counted = 0;
  let flipped = 0;
  for (const row of rows) {
    if (!/\/memory-\d+$/.test(row.id) || row.task === undefined) continue;
    const memory = row.messages.filter((m) => m.role === 'system').at(-1)?.content ?? '';
    const says = memorySays(memory);
    const real = truth.get(row.task);
    if (!says || !real) throw new Error(`row ${row.id}: no memory verdict or no true outcome`);
    counted++;
    if (says !== real) flipped++;
  }
  return { rows: counted, flipped, rate: counted ? flipped / counted : 0 };
}
