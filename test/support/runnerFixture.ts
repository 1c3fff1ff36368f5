import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OnnxPolicy } from '../../src/core/policy/onnxPolicy';
import type { Policy } from '../../src/core/policy/types';
import type { RunOptions, RunSummary } from '../../src/core/runner/runner';
import { runTasks } from '../../src/core/runner/runner';
import type { RunSettings } from '../../src/core/runner/settings';
import { openTaskEnvironment } from '../../src/core/tasks/taskEnvironment';
import { trainerPython } from './trainerPython';
import type { LoadedTask } from '../../src/core/tasks/format/taskFile';
import { scriptedModel } from './scriptedModel';
import { ensurePolicyHostBundle, ensureServerBundles } from './servers';
import type { CheckedTrace } from './traceChecks';
import { readCheckedTrace } from './traceChecks';

/** Generation limits of the tests: an unscripted prompt makes the test model write until max tokens. */
export const TEST_MAX_TOKENS = { act: 64, rehearse: 64 };

/** A finished run and its trace, read back and checked (schema, zero skipped lines, event order). */
export interface CheckedRun {
  summary: RunSummary;
  trace: CheckedTrace;
}

/** A runs folder per describe block, and a helper that plays tasks into it and reads the trace back. */
export function useRuns(): {
  runsDir: () => string;
  run: (
    policy: Policy,
    tasks: LoadedTask[],
    settings?: Partial<RunSettings>,
    extra?: Partial<RunOptions>,
  ) => Promise<CheckedRun>;
} {
  let dir: string | undefined;
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'runner-test-'));
  });
  after(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });
  const runsDir = () => dir!;
  return {
    runsDir,
    async run(policy, tasks, settings = {}, extra = {}) {
      const summary = await runTasks({
        runsDir: runsDir(),
        tasks,
        policy,
        // A host as the CLI is: the studio's Python runs the BFCL example's server and check.
        openEnvironment: (t) =>
          openTaskEnvironment(t, { workspaceFolder: process.cwd(), python: trainerPython }),
        grade: { python: trainerPython },
        settings: { maxTokens: TEST_MAX_TOKENS, ...settings },
        ...extra,
      });
      return { summary, trace: await readCheckedTrace(summary.traceFile) };
    },
  };
}

/**
 * The scripted test model served by a real policy host, for the enclosing describe block. Trains the
 * model the first time on a machine (some 30-60 s), so the hook's timeout is generous.
 */
export function useScriptedPolicy(): () => OnnxPolicy {
  let policy: OnnxPolicy | undefined;
  before(async function () {
    this.timeout(600_000);
    ensureServerBundles();
    ensurePolicyHostBundle();
    const modelDir = await scriptedModel((line) => console.log(`      ${line}`));
    policy = await OnnxPolicy.start({ modelDir, device: 'cpu' });
  });
  after(() => policy?.dispose());
  return () => policy!;
}
