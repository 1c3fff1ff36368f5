import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

let cached: string | undefined;

/**
 * The installed studio's root folder (the one with its package.json), found from this file's
 * location, so that bundles (dist/) and compiled tests (out/) find the same sibling files.
 */
export function studioRoot(): string {
  if (cached) return cached;
  let dir = __dirname;
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if (JSON.parse(readFileSync(pkg, 'utf8')).name === 'rehearsal-studio')
          return (cached = dir);
      } catch {
        /* keep looking */
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir)
      throw new Error(`Cannot find the Rehearsal Studio installation above ${__dirname}.`);
    dir = parent;
  }
}

/** The word that names the embedded default policy (`--policy default`, a run file's `"base"`). */
export const DEFAULT_POLICY_WORD = 'default';

/** The embedded default policy of an installation: `models/default` beside its package.json. */
export function defaultModelFolder(): string {
  return path.join(studioRoot(), 'models', 'default');
}
