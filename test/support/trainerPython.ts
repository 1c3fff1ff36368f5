import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { REPO } from './servers';

/**
 * The trainer's Python for end-to-end tests, as scripts/trainer-python.sh picks it: `$TRAINER_PYTHON`,
 * else the studio's environment (`$REHEARSAL_TRAINER_ENV` or the repository's `.venv`). Without one
 * it throws the command to run, instead of the spawn error a missing interpreter would give. Call it
 * where the test starts Python, not when its file loads, so that only those tests fail.
 */
export function trainerPython(): string {
  const fromEnv = process.env['TRAINER_PYTHON'];
  if (fromEnv) return fromEnv;
  const envDir = process.env['REHEARSAL_TRAINER_ENV'] || path.join(REPO, '.venv');
  const python =
    process.platform === 'win32'
      ? path.join(envDir, 'Scripts', 'python.exe')
      : path.join(envDir, 'bin', 'python');
  if (!existsSync(python) || !existsSync(path.join(envDir, 'rehearsal-env.json')))
    throw new Error(
      `No trainer environment in ${envDir}: run \`node dist/cli.js trainer setup --dev --tau2\` (npm test does).`,
    );
  return python;
}

/** One event of the trainer's stdout (docs/trainer-events.md). */
export interface TrainerEvent {
  event: string;
  [key: string]: unknown;
}

/**
 * `python -m trainer <args>` from the repository, run to its end: its events, the last of which must
 * be `done` (the assertion shows the last event otherwise).
 */
export async function trainerEvents(...args: string[]): Promise<TrainerEvent[]> {
  const { stdout } = await promisify(execFile)(trainerPython(), ['-m', 'trainer', ...args], {
    cwd: REPO,
    env: { ...process.env, OMP_WAIT_POLICY: 'PASSIVE' },
    maxBuffer: 256 << 20,
  });
  const events = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TrainerEvent);
  assert.equal(events.at(-1)?.event, 'done', JSON.stringify(events.at(-1)));
  return events;
}
