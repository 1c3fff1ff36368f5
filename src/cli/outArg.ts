import { statSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../core/base/errors';

/** What is at `p`: a folder, something else, or nothing. */
function kindAt(p: string): 'folder' | 'other' | 'none' {
  try {
    return statSync(p).isDirectory() ? 'folder' : 'other';
  } catch (err) {
    // ENOTDIR: a part of the path is a file; it is reported for that part, below.
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ||
      (err as NodeJS.ErrnoException).code === 'ENOTDIR'
      ? 'none'
      : 'other';
  }
}

/** The nearest existing folder above a path that does not exist yet, or the part of it that is a file. */
function blockingAncestor(p: string): string | undefined {
  for (let dir = path.dirname(p); ; dir = path.dirname(dir)) {
    const kind = kindAt(dir);
    if (kind === 'folder') return undefined;
    if (kind === 'other') return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * A folder a command writes into (created when missing), checked before anything starts: it must
 * not be a file, nor lie under one. `what` says what the folder holds, for the error. Returns `out`
 * as given (messages show it as the user wrote it).
 */
export function outFolderArg(out: string, option: string, what: string): string {
  const dir = path.resolve(out);
  const kind = kindAt(dir);
  if (kind === 'other')
    throw new StudioError('USAGE', `${option} ${out} is a file; pass a folder (${what}).`);
  const blocker = kind === 'none' ? blockingAncestor(dir) : undefined;
  if (blocker)
    throw new StudioError(
      'USAGE',
      `${option} ${out} cannot be created: ${blocker} is a file; pass a folder (${what}).`,
    );
  return out;
}

/** A file a command writes (its folder created when missing): not a folder, and not under a file. */
export function outFileArg(out: string, option: string, what: string): string {
  if (out.trim() === '') throw new StudioError('USAGE', `${option} needs a file name (${what}).`);
  const file = path.resolve(out);
  if (kindAt(file) === 'folder')
    throw new StudioError('USAGE', `${option} ${out} is a folder; pass a file name (${what}).`);
  const blocker = blockingAncestor(file);
  if (blocker)
    throw new StudioError(
      'USAGE',
      `${option} ${out} cannot be written: ${blocker} is a file; pass a file name in a folder (${what}).`,
    );
  return out;
}
