import { randomBytes } from 'node:crypto';
import { StudioError } from '../../base/errors';

/**
 * Run, episode, turn and call ids: a letter or digit, then letters, digits, `.`, `_`, `:`, `-`.
 * No slash and no leading dot, so an id can never name a path outside `.rehearsal/`.
 */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** True for a valid id. */
export function isValidId(id: unknown): id is string {
  return typeof id === 'string' && ID_PATTERN.test(id);
}

/** Throws a coded error for an invalid id (ids arrive from files, URIs and command lines). */
export function assertValidId(id: unknown, what: string): asserts id is string {
  if (!isValidId(id)) {
    throw new StudioError(
      'INVALID_ID',
      `Invalid ${what} id ${JSON.stringify(id)}: use letters, digits, '.', '_', ':' or '-' (no '/'), starting with a letter or digit.`,
    );
  }
}

/** A new run id: sortable by time, unique, e.g. `20261129-191500-shadow-3fa2c1`. */
export function newRunId(mode: string, now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${mode}-${randomBytes(3).toString('hex')}`;
}

const RUN_STAMP = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})\d{2}-(.+)$/;

/**
 * A run id as a row shows it: without the start stamp `newRunId` puts first (`shadow-3fa2c1` for
 * `20261129-191500-shadow-3fa2c1`); the stamp is the row's date ({@link runIdDate}). Other ids as
 * they are.
 */
export function runIdShort(runId: string): string {
  return RUN_STAMP.exec(runId)?.[6] ?? runId;
}

/** The start of a run, `2026-11-29 19:15` (UTC), read from its id's stamp; undefined without one. */
export function runIdDate(runId: string): string | undefined {
  const m = RUN_STAMP.exec(runId);
  return m ? `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}` : undefined;
}

/** Episode id from its index: `e1`, `e2`, ... */
export function episodeId(index: number): string {
  return `e${index + 1}`;
}

/** Turn id from its episode and index: `e1.t1`. */
export function turnId(episode: string, index: number): string {
  return `${episode}.t${index + 1}`;
}

/** Call id from its turn and index: `e1.t1.c1`. */
export function callId(turn: string, index: number): string {
  return `${turn}.c${index + 1}`;
}

/**
 * The order of episode, turn and call ids as a run plans them, whatever order their events reached
 * the trace in (episodes played at once interleave): `e2` before `e10`, `e1.t2.c1` before
 * `e1.t10.c1`; digits compare as numbers, the rest as text. Readers use it wherever a list shows
 * entities of one run in an order of their own (ties of a sort included), so that a run played
 * with `--concurrency 8` reads as one played episode after episode.
 */
export function compareIds(a: string, b: string): number {
  const pa = a.split(/(\d+)/);
  const pb = b.split(/(\d+)/);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] === pb[i]) continue;
    // Odd positions are the digit runs.
    if (i % 2 === 1) {
      const d = Number(pa[i]) - Number(pb[i]);
      if (d !== 0) return d;
      return pa[i].length - pb[i].length;
    }
    return pa[i] < pb[i] ? -1 : 1;
  }
  return pa.length - pb.length;
}
