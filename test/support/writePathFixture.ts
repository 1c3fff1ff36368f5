import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../src/core/base/errors';
import { useTempDir } from './tempDir';

/** True for the write path's refusal of a path outside `.rehearsal/` and the named `--out`. */
export const outside = (e: unknown): boolean =>
  e instanceof StudioError && e.code === 'PATH_OUTSIDE_WORKSPACE';

/** Every file and folder under `dir`, relative, sorted. */
export async function listing(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (at: string) => {
    for (const e of await fs.readdir(at, { withFileTypes: true })) {
      found.push(path.relative(dir, path.join(at, e.name)));
      if (e.isDirectory()) await walk(path.join(at, e.name));
    }
  };
  await walk(dir);
  return found.sort();
}

/**
 * For each test of the enclosing `describe`, a temporary folder (`tmp`) and `layout()`: a workspace
 * in it with its `.rehearsal/`, and a folder outside the workspace that the tests link to (`runs` is
 * where the runs folder goes, not made).
 */
export function useWritePathLayout(): {
  tmp: () => string;
  layout: () => Promise<{ ws: string; away: string; runs: string }>;
} {
  const tmp = useTempDir('rehearsal-writepath-');
  const layout = async () => {
    const ws = path.join(tmp(), 'ws');
    const away = path.join(tmp(), 'away');
    await fs.mkdir(path.join(ws, '.rehearsal'), { recursive: true });
    await fs.mkdir(away, { recursive: true });
    return { ws, away, runs: path.join(ws, '.rehearsal', 'runs') };
  };
  return { tmp, layout };
}
