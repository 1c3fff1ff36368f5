import { existsSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The folder of the studio's package.json above `from` (the running bundle in dist/, or compiled
 * code in out/), or undefined when there is none.
 */
export function findPackageRoot(from: string = __dirname): string | undefined {
  let dir = from;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}
