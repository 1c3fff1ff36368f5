/**
 * Entry of the editor-test suite, called inside a real extension host: by code-server's workbench
 * (test/editor/run.ts passes this file as `extensionTestsPath`) or by `@vscode/test-electron`
 * (test/editor/runElectron.ts). It runs every `*.test.js` beside it with mocha; the promise
 * rejects when a test fails, which makes the host exit non-zero.
 * `REHEARSAL_EDITOR_GREP` runs only the tests whose full title matches it.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import { EditorReporter } from './reporter';

export async function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 30_000, reporter: EditorReporter });
  if (process.env.REHEARSAL_EDITOR_GREP) mocha.grep(process.env.REHEARSAL_EDITOR_GREP);
  const files = (await fs.readdir(__dirname)).filter((f) => f.endsWith('.test.js')).sort();
  if (files.length === 0)
    throw new Error(`No *.test.js files in ${__dirname}: compile with \`npx tsc -p .\` first.`);
  for (const f of files) mocha.addFile(path.join(__dirname, f));
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} editor test${failures === 1 ? '' : 's'} failed.`);
}
