// The one write path: every file and folder the studio writes is made through this module (lint
// forbids fs write calls anywhere else in src/; see eslint.config.mjs, "one write path"). A write
// names its root, and lands inside that root's real path or is refused with PATH_OUTSIDE_WORKSPACE.
import type { WriteStream } from 'node:fs';
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StudioError } from './errors';

/** The studio's folder inside a workspace (the same name as trace/format/discover's STUDIO_FOLDER). */
const STUDIO_FOLDER = '.rehearsal';
// Windows has no O_NOFOLLOW; there a final link is caught by the lstat before the open.
const O_NOFOLLOW = fsConstants.O_NOFOLLOW ?? 0;

/**
 * A folder (or one file) the studio may write into. `trusted` is the part of the path a person
 * named (a workspace folder, an `--out`): links in it are followed as they are. Everything below it
 * must resolve inside `dir`'s real path: a link there that leads out is refused.
 */
export interface WriteRoot {
  /** Absolute; every path written lies at or under it. */
  readonly dir: string;
  /** Absolute; `dir` or a folder above it. */
  readonly trusted: string;
  /** What the root is, for messages. */
  readonly what: string;
}

/** `<workspace>/.rehearsal`: the workspace folder is trusted as it is, `.rehearsal` and all below it are confined. */
export function workspaceRoot(workspace: string): WriteRoot {
  const trusted = path.resolve(workspace);
  const dir = path.join(trusted, STUDIO_FOLDER);
  return { dir, trusted, what: dir };
}

/** A folder or file a person named (`--out`, a run file's `out_dir`, the trainer's environment): trusted as named. */
export function namedRoot(target: string): WriteRoot {
  const dir = path.resolve(target);
  return { dir, trusted: dir, what: dir };
}

/** The system's temporary folder: per-episode scratch folders of MCP servers (`{episodeDir}`). */
export function tempRoot(): WriteRoot {
  return { ...namedRoot(os.tmpdir()), what: `the temporary folder ${os.tmpdir()}` };
}

/**
 * The root for writing at `target` (a folder or file the caller was given): the workspace's
 * `.rehearsal` when `target` lies in one (the outermost), so that a link inside `.rehearsal/` that
 * leads out is refused; otherwise `target` itself, as the person named it.
 */
export function writeRootOf(target: string): WriteRoot {
  const abs = path.resolve(target);
  const parts = abs.split(path.sep);
  const at = parts.indexOf(STUDIO_FOLDER);
  if (at > 0) return workspaceRoot(parts.slice(0, at).join(path.sep) || path.sep);
  return namedRoot(abs);
}

/** Whether `p` is `dir` or lies under it (both absolute and normalised). */
function within(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

const LINK_FIX = 'remove the link, or name the folder you want written with --out';

function refuse(
  root: WriteRoot,
  target: string,
  why: string,
  details?: Record<string, unknown>,
  fix = LINK_FIX,
) {
  return new StudioError(
    'PATH_OUTSIDE_WORKSPACE',
    `Refusing to write ${target}: ${why}. The studio writes only inside ${root.what}: ${fix}.`,
    details,
  );
}

const THROUGH_LINK = 'it is a symbolic link; the studio does not write through links';

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

async function lstatOrNone(p: string) {
  try {
    return await fs.lstat(p);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR') return undefined;
    throw err;
  }
}

/** The real path of `p`, or of its deepest existing folder with the rest appended. */
async function realpathDeepest(p: string): Promise<string> {
  const rest: string[] = [];
  for (let at = p; ; at = path.dirname(at)) {
    try {
      return path.join(await fs.realpath(at), ...rest.reverse());
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT' && errnoOf(err) !== 'ENOTDIR') throw err;
      if (path.dirname(at) === at) return p;
      rest.push(path.basename(at));
    }
  }
}

/** How the last component of a path is treated. */
type Last = 'file' | 'folder' | 'entry';

/**
 * Where to act for `target`: its lexical check against the root, then every component below the
 * trusted part walked with lstat; a link among them must resolve inside the root's real path. With
 * `create`, missing folders on the way are made (folder by folder, each checked). Returns the path
 * to act on, built from real paths; its last component is never a link followed ('file' refuses a
 * link there; 'entry' acts on the link itself; 'folder' follows one that stays inside).
 */
async function locate(
  root: WriteRoot,
  target: string,
  last: Last,
  create: boolean,
): Promise<{ at: string; named: boolean }> {
  if (target.includes('\0'))
    throw refuse(root, JSON.stringify(target), 'the path holds a NUL', undefined, 'fix the name');
  const abs = path.resolve(target);
  if (!within(root.dir, abs))
    throw refuse(root, abs, 'it is not inside that folder', undefined, 'name a path inside it');
  if (abs === root.trusted) {
    // The named path itself (an --out file or folder): links in it are the person's own.
    if (create) await fs.mkdir(last === 'folder' ? abs : path.dirname(abs), { recursive: true });
    return { at: abs, named: true };
  }
  if (create) await fs.mkdir(root.trusted, { recursive: true });
  const base = await realpathDeepest(root.trusted);
  const bound = path.join(base, path.relative(root.trusted, root.dir));
  const parts = path.relative(root.trusted, abs).split(path.sep);
  let at = base;
  for (let i = 0; i < parts.length; i++) {
    const next = path.join(at, parts[i]);
    const isLast = i === parts.length - 1;
    let stat = await lstatOrNone(next);
    if (!stat && create && (!isLast || last === 'folder')) {
      try {
        await fs.mkdir(next);
      } catch (err) {
        if (errnoOf(err) !== 'EEXIST') throw err;
      }
      stat = await lstatOrNone(next);
    }
    if (!stat) {
      // Nothing there (and nothing made): the rest is plain names under a checked folder.
      return { at: path.join(next, ...parts.slice(i + 1)), named: false };
    }
    if (stat.isSymbolicLink()) {
      if (isLast && last === 'entry') return { at: next, named: false };
      if (isLast && last === 'file') throw refuse(root, abs, THROUGH_LINK, { link: abs });
      let real: string;
      try {
        real = await fs.realpath(next);
      } catch {
        throw refuse(root, abs, `${next} is a symbolic link that leads nowhere`);
      }
      if (!within(bound, real)) throw refuse(root, abs, `${next} is a symbolic link to ${real}`);
      at = real;
    } else {
      at = next;
    }
  }
  // A file (not a folder) in a folder's place fails here as fs.mkdir would (EEXIST).
  if (last === 'folder' && create) await fs.mkdir(at, { recursive: true });
  return { at, named: false };
}

/** The open flags the studio writes with. */
export type WriteFlags = 'w' | 'wx' | 'a' | 'a+';

const FLAGS: Record<WriteFlags, number> = {
  w: fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC,
  wx: fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL,
  a: fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND,
  'a+': fsConstants.O_RDWR | fsConstants.O_CREAT | fsConstants.O_APPEND,
};

/**
 * Opens `file` for writing inside `root`, making its missing folders; a link in the file's place
 * is refused (O_NOFOLLOW; lstat first where there is none), unless it is the very path named as the
 * root (an `--out` file).
 */
export async function openForWrite(
  root: WriteRoot,
  file: string,
  flags: WriteFlags,
  mode = 0o644,
): Promise<fs.FileHandle> {
  const { at, named } = await locate(root, file, 'file', true);
  try {
    return await fs.open(at, FLAGS[flags] | (named ? 0 : O_NOFOLLOW), mode);
  } catch (err) {
    const abs = path.resolve(file);
    if (errnoOf(err) === 'ELOOP' && !named) throw refuse(root, abs, THROUGH_LINK, { link: abs });
    throw err;
  }
}

/** Writes (replaces) a whole file inside `root`, making its folders. */
export async function writeFileInside(
  root: WriteRoot,
  file: string,
  data: string | Uint8Array,
  options: { flags?: 'w' | 'wx'; mode?: number } = {},
): Promise<void> {
  const handle = await openForWrite(root, file, options.flags ?? 'w', options.mode);
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** Appends to a file inside `root`, making it and its folders when missing. */
export async function appendInside(
  root: WriteRoot,
  file: string,
  data: string | Uint8Array,
): Promise<void> {
  const handle = await openForWrite(root, file, 'a');
  try {
    await handle.appendFile(data);
  } finally {
    await handle.close();
  }
}

/** A write stream on a file inside `root` (opened as {@link openForWrite} does). */
export async function writeStreamInside(
  root: WriteRoot,
  file: string,
  flags: 'w' | 'a' = 'w',
): Promise<WriteStream> {
  const handle = await openForWrite(root, file, flags);
  return handle.createWriteStream();
}

/** Makes a folder (and its missing parents) inside `root`; returns its real path. */
export async function mkdirInside(root: WriteRoot, dir: string): Promise<string> {
  return (await locate(root, dir, 'folder', true)).at;
}

/** Makes a fresh folder `<prefix><random>` inside `root` (as fs.mkdtemp); returns its path. */
export async function mkdtempInside(root: WriteRoot, prefix: string): Promise<string> {
  const parent = await mkdirInside(root, path.dirname(path.resolve(prefix)));
  return fs.mkdtemp(path.join(parent, path.basename(prefix)));
}

/** Renames `from` to `to`, both inside `root`; a link at either end is moved or replaced, never followed. */
export async function renameInside(root: WriteRoot, from: string, to: string): Promise<void> {
  const source = await locate(root, from, 'entry', false);
  const target = await locate(root, to, 'entry', true);
  await fs.rename(source.at, target.at);
}

/** Removes a file or folder inside `root` (as fs.rm); a link is removed itself, never followed. */
export async function removeInside(
  root: WriteRoot,
  target: string,
  options: { recursive?: boolean; force?: boolean } = {},
): Promise<void> {
  await fs.rm((await locate(root, target, 'entry', false)).at, options);
}
