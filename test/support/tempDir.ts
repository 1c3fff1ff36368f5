import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A fresh temporary folder for each test of the enclosing `describe`, removed after it. Returns a
 * getter, since the folder exists only while a test runs.
 */
export function useTempDir(prefix = 'rehearsal-test-'): () => string {
  let dir: string | undefined;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  });
  afterEach(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    dir = undefined;
  });
  return () => {
    if (!dir) throw new Error('useTempDir: the folder exists only inside a test');
    return dir;
  };
}
