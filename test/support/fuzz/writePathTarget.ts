import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { StudioError } from '../../../src/core/base/errors';
import type { WriteRoot } from '../../../src/core/base/writePath';
import {
  appendInside,
  mkdirInside,
  namedRoot,
  openForWrite,
  removeInside,
  renameInside,
  workspaceRoot,
  writeFileInside,
} from '../../../src/core/base/writePath';
import type { FuzzTarget } from './targets';

/**
 * The one write path as a fuzz target: in a fresh scratch case, a workspace (or a named --out,
 * itself sometimes a link), links made at random places inside it pointing inside, outside, to
 * files, to nowhere; then writes, appends, folders, renames and removals at random paths (`..`,
 * absolute paths in and out, NUL, unicode slashes). The promise: each call writes inside the
 * root's real path, or is refused with PATH_OUTSIDE_WORKSPACE (or the filesystem's own error, such
 * as ENOTDIR for a file in a folder's place); never is anything outside changed, which is checked
 * by listing (paths, contents, link targets) everything in the case but the root's real folder.
 */

/** Filesystem errors a write may meet honestly (a file where a folder is wanted, and the like). */
const FS_REFUSALS = new Set([
  'ENOTDIR',
  'EEXIST',
  'EISDIR',
  'ENOENT',
  'ENOTEMPTY',
  'ELOOP',
  'EINVAL',
]);

const NAME = fc.constantFrom(
  'a',
  'b',
  'runs',
  '.rehearsal',
  '..',
  '.',
  'x\u2215y',
  'x\uff0fy',
  'é',
  '\u202eb',
  'n\0ul',
);
const RELATIVE = fc.array(NAME, { minLength: 1, maxLength: 5 }).map((p) => p.join('/'));

/** Where a path starts: the root, the case, the outside (relative parts may climb with `..`). */
type Anchor = 'root' | 'case' | 'outside';
const TARGET = fc.record({
  anchor: fc.constantFrom<Anchor>('root', 'root', 'case', 'outside'),
  rel: RELATIVE,
});
/** Where a link points. */
const LINK_TO = fc.constantFrom(
  'outside',
  'outside/file.txt',
  'outside/sub',
  'inside/a',
  'root',
  'case',
  'nowhere',
  '../../outside',
  '..',
);
const OP = fc.record({
  kind: fc.constantFrom('write', 'append', 'open', 'mkdir', 'rename', 'remove'),
  target: TARGET,
  to: TARGET,
});
const CASE = fc.record({
  kind: fc.constantFrom('workspace', 'out', 'out-link'),
  rehearsalExists: fc.boolean(),
  links: fc.array(fc.record({ at: RELATIVE, to: LINK_TO }), { maxLength: 4 }),
  folders: fc.array(RELATIVE, { maxLength: 3 }),
  ops: fc.array(OP, { minLength: 1, maxLength: 6 }),
});

/**
 * Every entry under `dir` but the root (`skip[0]`, the named path: removing or renaming it is
 * allowed) and all under the root's real folder (`skip[1]`): path, and content or link target.
 */
async function state(dir: string, skip: [string, string]): Promise<string[]> {
  const out: string[] = [];
  const walk = async (at: string) => {
    for (const e of await fs.readdir(at, { withFileTypes: true })) {
      const p = path.join(at, e.name);
      if (p === skip[0] || p === skip[1] || p.startsWith(skip[1] + path.sep)) continue;
      if (e.isSymbolicLink()) out.push(`${p} -> ${await fs.readlink(p)}`);
      else if (e.isDirectory()) {
        out.push(`${p}/`);
        await walk(p);
      } else out.push(`${p}: ${await fs.readFile(p, 'utf8')}`);
    }
  };
  await walk(dir);
  return out.sort();
}

let cases = 0;

/** The write path target (see the file's comment). */
export const writePathTarget: FuzzTarget = {
  name: 'write path (links, .., absolute paths, NUL in a scratch root)',
  // Each input builds a case folder with links (about 25 ms): half the inputs of a parser.
  share: 0.5,
  property: (scratch) =>
    fc.asyncProperty(CASE, async (c) => {
      const dir = path.join(scratch, 'write-path', `case-${cases++}`);
      await fs.rm(dir, { recursive: true, force: true });
      const outside = path.join(dir, 'outside');
      await fs.mkdir(path.join(outside, 'sub'), { recursive: true });
      await fs.writeFile(path.join(outside, 'file.txt'), 'kept');
      let root: WriteRoot;
      // The root's real folder: what may change. An --out that is a link is trusted as named.
      let realRoot: string;
      if (c.kind === 'workspace') {
        await fs.mkdir(path.join(dir, 'ws'));
        if (c.rehearsalExists) await fs.mkdir(path.join(dir, 'ws', '.rehearsal'));
        root = workspaceRoot(path.join(dir, 'ws'));
        realRoot = root.dir;
      } else if (c.kind === 'out') {
        root = namedRoot(path.join(dir, 'out'));
        realRoot = root.dir;
      } else {
        await fs.mkdir(path.join(dir, 'elsewhere'));
        await fs.symlink(path.join(dir, 'elsewhere'), path.join(dir, 'out'));
        root = namedRoot(path.join(dir, 'out'));
        realRoot = path.join(dir, 'elsewhere');
      }
      const resolveTo = (to: string) =>
        to === 'root'
          ? root.dir
          : to === 'case'
            ? dir
            : to === 'inside/a'
              ? path.join(root.dir, 'a')
              : to.startsWith('..')
                ? to
                : path.join(dir, to);
      // Links and folders the case starts with, made by the test (not through the write path).
      const inRoot = (p: string) => p.startsWith(root.dir + path.sep) && !p.includes('\0');
      for (const f of c.folders)
        if (inRoot(path.join(root.dir, f)))
          await fs.mkdir(path.join(root.dir, f), { recursive: true }).catch(() => undefined);
      for (const l of c.links) {
        const at = path.join(root.dir, l.at);
        if (!inRoot(at)) continue;
        await fs.mkdir(path.dirname(at), { recursive: true }).catch(() => undefined);
        await fs.symlink(resolveTo(l.to), at).catch(() => undefined);
      }
      const before = await state(dir, [root.dir, realRoot]);
      const pathOf = (t: { anchor: Anchor; rel: string }) =>
        // Not normalised: the write path resolves `..` and `.` itself.
        `${t.anchor === 'root' ? root.dir : t.anchor === 'case' ? dir : outside}/${t.rel}`;
      for (const op of c.ops) {
        const target = pathOf(op.target);
        try {
          if (op.kind === 'write') await writeFileInside(root, target, 'written');
          else if (op.kind === 'append') await appendInside(root, target, 'appended');
          else if (op.kind === 'open') await (await openForWrite(root, target, 'a+')).close();
          else if (op.kind === 'mkdir') await mkdirInside(root, target);
          else if (op.kind === 'rename') await renameInside(root, target, pathOf(op.to));
          else await removeInside(root, target, { recursive: true, force: true });
        } catch (err) {
          if (err instanceof StudioError) assert.equal(err.code, 'PATH_OUTSIDE_WORKSPACE');
          else
            assert.ok(
              FS_REFUSALS.has((err as NodeJS.ErrnoException).code ?? ''),
              `${op.kind} ${JSON.stringify(target)}: ${String(err)}`,
            );
        }
      }
      assert.deepEqual(
        await state(dir, [root.dir, realRoot]),
        before,
        `something outside ${realRoot} changed: ${JSON.stringify(c)}`,
      );
      await fs.rm(dir, { recursive: true, force: true });
    }),
};
