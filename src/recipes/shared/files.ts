import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { readFile } from 'node:fs/promises';
import {
  mkdirInside,
  removeInside,
  renameInside,
  writeFileInside,
  writeRootOf,
} from '../../core/base/writePath';

// The recipes write through the core's one write path: a path under a workspace's .rehearsal/ is
// confined there, any other (WORK, MODEL, a temporary folder) is trusted as the person named it.

/** Writes `value` as indented JSON with a final newline. */
export function writeJson(file: string, value: unknown): Promise<void> {
  return writeText(file, JSON.stringify(value, null, 2) + '\n');
}

/** Writes (replaces) a text file, making its folders. */
export function writeText(file: string, text: string): Promise<void> {
  return writeFileInside(writeRootOf(file), file, text);
}

/** Reads a JSON file. */
export async function readJson<T>(file: string): Promise<T> {
  return JSON.parse(await readFile(file, 'utf8')) as T;
}

/** Reads a JSON file, or `fallback` when it is not there. */
export async function readJsonOr<T>(file: string, fallback: T): Promise<T> {
  return existsSync(file) ? readJson<T>(file) : fallback;
}

/** Copies one file, making the target's folders. */
export async function copyInto(from: string, to: string): Promise<void> {
  await writeFileInside(writeRootOf(to), to, await readFile(from));
}

/** Makes a folder and its parents. */
export async function makeDir(dir: string): Promise<void> {
  await mkdirInside(writeRootOf(dir), dir);
}

/** Removes a file or folder and all it holds; nothing there is fine. */
export async function removeTree(target: string): Promise<void> {
  await removeInside(writeRootOf(target), target, { recursive: true, force: true });
}

/** Moves a file or folder to another name in the same place (replacing nothing: `to` must be free). */
export async function moveTo(from: string, to: string): Promise<void> {
  await renameInside(writeRootOf(path.dirname(path.resolve(to))), from, to);
}
