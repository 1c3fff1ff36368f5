import { spawn } from 'node:child_process';
import { StudioError } from '../../base/errors';
import { trainerInvocation } from './backends';

/** Bytes of the trainer's answer kept (its events on stdout, the tail of its log on stderr). */
const MAX_ANSWER = 1 << 20;

/**
 * `rehearse export --format trl`: the rows (JSONL text) written by the trainer's `export-trl` as one
 * parquet file in TRL's conversational prompt-completion format (pyarrow writes parquet; the rows go on
 * its stdin, so no other file is written). The trainer writes `file` through its own write path, inside
 * the folder it names; a failure is `TRAINER_EXPORT_FAILED` with the trainer's code and message.
 */
export async function writeTrlDataset(file: string, jsonl: string): Promise<void> {
  const { python, root, env } = trainerInvocation();
  const child = spawn(python, ['-m', 'trainer', 'export-trl', '--rows', '-', '--out', file], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-MAX_ANSWER)));
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-MAX_ANSWER)));
  const exit = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  // A trainer that ends early (an error) closes its stdin: the write's EPIPE is not the story.
  child.stdin.on('error', () => undefined);
  child.stdin.end(jsonl);
  const code = await exit.catch((e: unknown) => {
    throw new StudioError(
      'TRAINER_EXPORT_FAILED',
      `Cannot start the trainer (${python}): ${String(e)}. Run \`rehearse trainer setup\`.`,
    );
  });
  if (code === 0) return;
  const last = stdout.trim().split('\n').at(-1) ?? '';
  let event: { code?: string; message?: string } = {};
  try {
    event = JSON.parse(last) as typeof event;
  } catch {
    /* no event: the log tail below says what happened */
  }
  throw new StudioError(
    'TRAINER_EXPORT_FAILED',
    event.code
      ? `The trainer could not write ${file}: ${event.code}: ${event.message ?? ''}`
      : `The trainer could not write ${file} (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' ')}`,
  );
}
