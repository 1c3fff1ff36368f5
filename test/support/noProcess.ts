/**
 * Loaded only by the unit tier (.mocharc.unit.json): a unit test starts no process. Every way Node
 * starts one (child_process's spawn, exec, execFile, fork and their sync variants, and
 * worker_threads' Worker) throws an error that names the test and says where it belongs. Code under
 * test may catch that error and turn it into a coded result, so each attempt is also recorded and
 * the tier fails at its end, listing them: a test that starts a process cannot pass here.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import * as path from 'node:path';
import Mocha from 'mocha';

// The modules themselves, not TypeScript's read-only namespace copies of them.
const builtin = createRequire(__filename) as (id: string) => Record<string, unknown>;
const childProcess = builtin('node:child_process');
const workerThreads = builtin('node:worker_threads');

const SPAWNERS = [
  'spawn',
  'spawnSync',
  'exec',
  'execSync',
  'execFile',
  'execFileSync',
  'fork',
] as const;

let current: Mocha.Runnable | undefined;
const attempts: string[] = [];

/** The test's source file, from its compiled one (out/test/unit/a.test.js: test/unit/a.test.ts). */
const source = (compiled: string): string =>
  path
    .relative(process.cwd(), compiled)
    .replace(/^out[\\/]/, '')
    .replace(/\.js$/, '.ts');

/** The test (or hook) running now, or the test file on the stack while files load. */
function where(stack: string | undefined): string {
  if (current) return `"${current.fullTitle()}"${current.file ? ` (${source(current.file)})` : ''}`;
  const file = /[\w./\\-]*test[\\/][\w./\\-]+\.test\.js/.exec(stack ?? '')?.[0];
  return file ? `loading ${source(file)}` : 'a test of the unit tier';
}

function refuse(what: string): never {
  const message = `${where(new Error().stack)}: this test starts a process (${what}): it belongs in test/e2e`;
  attempts.push(message);
  throw new Error(message);
}

const describeCommand = (args: unknown[]): string =>
  args
    .filter((a): a is string => typeof a === 'string')
    .concat(args.flatMap((a) => (Array.isArray(a) ? a.filter((s) => typeof s === 'string') : [])))
    .join(' ')
    .slice(0, 200);

for (const name of SPAWNERS)
  childProcess[name] = (...args: unknown[]) =>
    refuse(`child_process.${name} ${describeCommand(args)}`);
workerThreads.Worker = class {
  constructor(file: unknown) {
    refuse(`new Worker(${String(file)})`);
  }
};
// ES modules that imported these names see the replacements too.
syncBuiltinESMExports();

const enter = (runnable: Mocha.Runnable): void => {
  current = runnable;
};
const run = Mocha.Runnable.prototype.run;
Mocha.Runnable.prototype.run = function (this: Mocha.Runnable, done) {
  enter(this);
  return run.call(this, done);
};

export const mochaHooks = {
  afterAll(): void {
    current = undefined;
    if (attempts.length)
      throw new Error(
        `${attempts.length} attempt(s) to start a process in the unit tier (move these tests to test/e2e):\n${[...new Set(attempts)].join('\n')}`,
      );
  },
};
