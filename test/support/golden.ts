import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { fromRoot } from './paths';

/**
 * Compares rendered text with `test/golden/<name>`. With `UPDATE_GOLDENS=1` the golden file is
 * rewritten instead (then review the change with `git diff test/golden`).
 */
export async function assertGolden(name: string, actual: string): Promise<void> {
  const file = fromRoot('test', 'golden', name);
  if (process.env.UPDATE_GOLDENS === '1') {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, actual);
    return;
  }
  let expected: string;
  try {
    expected = await fs.readFile(file, 'utf8');
  } catch {
    assert.fail(
      `golden file ${file} is missing: run the tests with UPDATE_GOLDENS=1 to create it, then review it`,
    );
  }
  assert.equal(
    actual,
    expected,
    `output differs from golden ${name} (UPDATE_GOLDENS=1 rewrites it)`,
  );
}
