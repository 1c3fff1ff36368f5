/**
 * A mocha reporter for the extension host. The host's console goes to the workbench (a browser
 * page under code-server), so besides printing, every line is appended to the file named by
 * `REHEARSAL_EDITOR_LOG`, which the harness follows live; the outcome of every test is written as
 * JSON to `REHEARSAL_EDITOR_RESULTS` at the end.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import Mocha from 'mocha';

/** One test's outcome, as written to the results file. */
export interface TestOutcome {
  title: string;
  state: 'passed' | 'failed';
  durationMs: number;
  error?: string;
}

/** The results file's content. */
export interface SuiteResults {
  passed: number;
  failed: number;
  durationMs: number;
  tests: TestOutcome[];
}

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_RUN_END } =
  Mocha.Runner.constants;

/** Prints a spec-like outline and writes the log and results files. */
export class EditorReporter extends Mocha.reporters.Base {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const logFile = process.env.REHEARSAL_EDITOR_LOG;
    const resultsFile = process.env.REHEARSAL_EDITOR_RESULTS;
    const write = (line: string) => {
      console.log(line);
      if (logFile) appendFileSync(logFile, line + '\n');
    };
    const tests: TestOutcome[] = [];
    const started = Date.now();
    let depth = 0;
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.root) return;
      write(`${'  '.repeat(depth++)}${suite.title}`);
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      if (!suite.root) depth--;
    });
    runner.on(EVENT_TEST_PASS, (test) => {
      tests.push({ title: test.fullTitle(), state: 'passed', durationMs: test.duration ?? 0 });
      write(`${'  '.repeat(depth)}✓ ${test.title} (${test.duration ?? 0} ms)`);
    });
    runner.on(EVENT_TEST_FAIL, (test, err: Error) => {
      const error = err.stack ?? String(err);
      tests.push({
        title: test.fullTitle(),
        state: 'failed',
        durationMs: test.duration ?? 0,
        error,
      });
      write(
        `${'  '.repeat(depth)}✗ ${test.title}\n${error.replace(/^/gm, `${'  '.repeat(depth + 2)}`)}`,
      );
    });
    runner.once(EVENT_RUN_END, () => {
      const results: SuiteResults = {
        passed: tests.filter((t) => t.state === 'passed').length,
        failed: tests.filter((t) => t.state === 'failed').length,
        durationMs: Date.now() - started,
        tests,
      };
      write(
        `${results.passed} passing, ${results.failed} failing (${(results.durationMs / 1000).toFixed(1)}s)`,
      );
      if (resultsFile) writeFileSync(resultsFile, JSON.stringify(results, null, 2));
    });
  }
}
