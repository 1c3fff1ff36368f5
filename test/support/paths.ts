import { existsSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The repository root, found from the compiled test's folder (tests run from `out/test/unit` or
 * `out/test/e2e`).
 */
export function repoRoot(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${__dirname}`);
    dir = parent;
  }
  return dir;
}

/** A path under the repository root. */
export function fromRoot(...segments: string[]): string {
  return path.join(repoRoot(), ...segments);
}
