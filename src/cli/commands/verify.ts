import { studioPython } from '../studioPython';
import * as path from 'node:path';
import { SharedEnvironments } from '../../core/env/sharedEnvironments';
import { canonicalJson } from '../../core/base/canonicalJson';
import { StudioError, errorMessage } from '../../core/base/errors';
import type { JsonValue } from '../../core/base/json';
import type { CheckVerdict } from '../../core/trace/format/schema';
import type { EnvironmentHost } from '../../core/env/openEnvironment';
import type { ToolEnvironment } from '../../core/env/toolEnvironment';
import { loadTasks } from '../../core/tasks/format/loader';
import { resolveTaskArguments } from '../../core/tasks/samples';
import { playReference } from '../../core/tasks/referencePlayer';
import { openTaskEnvironment } from '../../core/tasks/taskEnvironment';
import type { LoadedTask } from '../../core/tasks/format/taskFile';
import { counted } from '../../core/base/counted';
import { concurrencyArg, concurrencyFor, forEachConcurrent } from '../../core/runner/concurrency';
import type { CliIO } from '../io';
import { EXIT } from '../io';
import type { JudgeArgs } from '../judgeArg';
import { judgeSummaryLines, openJudgeArg } from '../judgeArg';
import type { ExampleTaskOutcome } from '../examplesOut';
import { examplesOutLines, planExamplesOut, writeExamplesOut } from '../examplesOut';
import type { RecordedExample } from '../../core/protocol/types';
import { referenceExamples } from '../../core/training/groundedTasks';
import type { Judge } from '../../core/tasks/checks/judge';
import type { NotEvaluatedChecks } from '../../core/tasks/checks/notEvaluated';
import { tallyNotEvaluated } from '../../core/tasks/checks/notEvaluated';

/** Options of `rehearse verify`. */
export interface VerifyArgs extends JudgeArgs {
  workspace?: string;
  json?: boolean;
  verbose?: boolean;
  concurrency?: string;
  /** Write each task again into this folder, with its reference's calls and real responses as examples. */
  examplesOut?: string;
}

/** The CLI's answer to `${input:ID}`: the environment variable REHEARSE_INPUT_<ID>. */
export function cliInputResolver(
  env: NodeJS.ProcessEnv = process.env,
): EnvironmentHost['resolveInput'] {
  return async (id) => env[`REHEARSE_INPUT_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`];
}

/**
 * `rehearse verify <task...>`: plays each task's reference solution against its real servers and
 * grades it with the task's checks. Exit code 1 when a task fails its own checks or cannot run.
 * `--concurrency` tasks play at once, each slot with its own environments; within a slot, tasks with
 * the same servers share one (servers with a reset tool are started once). Lines keep the tasks' order.
 * `--examples-out <dir>` writes every task again under its own file name in `dir`, with the calls of
 * its reference and their real responses added to its examples where the reference passed (grounded
 * imagination, as EnvACE's simulator sees a sample's reference); the others as they were. The exit
 * code stays verify's.
 */
export async function verifyCommand(
  paths: string[],
  options: VerifyArgs,
  io: CliIO,
): Promise<number> {
  const concurrency = concurrencyFor(concurrencyArg(options.concurrency), 'reference');
  const tasks = await loadTasks(resolveTaskArguments(paths));
  if (!tasks.length)
    throw new StudioError('USAGE', `No task files (*.task.json) found in ${paths.join(', ')}.`);
  const plan = options.examplesOut ? planExamplesOut(options.examplesOut, tasks) : undefined;
  const judge = await openJudgeArg(options);
  const workspaceFolder = path.resolve(options.workspace ?? process.cwd());
  const host: EnvironmentHost = {
    workspaceFolder,
    resolveInput: cliInputResolver(),
    log: options.verbose ? (line) => io.err(line) : undefined,
    python: studioPython,
  };
  // Each task in flight holds environments of its own (servers keep state), shared with later tasks.
  const envs = new SharedEnvironments<ToolEnvironment>(Math.min(concurrency, tasks.length));
  const rows: VerifyRow[] = [];
  try {
    await forEachConcurrent(tasks, concurrency, async (loaded, index) => {
      rows[index] = await verifyTask(loaded, host, envs, judge);
    });
  } finally {
    await envs.closeAll();
  }
  const bad = rows.filter((r) => r.success !== true && !(r.error === NO_REFERENCE));
  const notEvaluated: NotEvaluatedChecks[] = [];
  for (const r of rows) tallyNotEvaluated(notEvaluated, r.checks);
  const examplesOut = plan && (await writeExamplesOut(plan, tasks, rows.map(exampleOutcome)));
  if (options.json) {
    io.out(
      JSON.stringify(
        {
          tasks: rows.map(({ checks: _checks, examples: _examples, ...row }) => row),
          passed: rows.length - bad.length,
          failed: bad.length,
          notEvaluated,
          ...(examplesOut ? { examplesOut } : {}),
        },
        null,
        2,
      ),
    );
  } else {
    for (const r of rows) {
      const mark = r.error
        ? r.error === NO_REFERENCE
          ? 'skip'
          : 'ERROR'
        : r.success
          ? 'ok'
          : 'FAIL';
      io.out(
        `${mark.padEnd(5)} ${r.id}  reward ${r.reward ?? '-'}${r.error ? `  ${r.error}` : ''}`,
      );
      for (const f of r.failed) io.out(`        ${f}`);
    }
    io.out(`${rows.length - bad.length} of ${counted(rows.length, 'task')} pass their own checks`);
    for (const line of judgeSummaryLines(notEvaluated)) io.out(line);
    if (examplesOut) for (const line of examplesOutLines(examplesOut)) io.out(line);
  }
  return bad.length ? EXIT.failure : EXIT.ok;
}

const NO_REFERENCE = 'no reference solution';

/** What a task's verdict gives `--examples-out`: the reference's examples when it passed, else why not. */
function exampleOutcome(r: VerifyRow): ExampleTaskOutcome {
  if (r.error === NO_REFERENCE) return { id: r.id, examples: 'no reference solution' };
  if (r.error) return { id: r.id, examples: 'reference could not be played' };
  if (r.success !== true) return { id: r.id, examples: 'reference fails its checks' };
  return { id: r.id, examples: r.examples ?? [] };
}

/** One task's line of the verdict. */
interface VerifyRow {
  id: string;
  reward: number | null;
  success: boolean | null;
  failed: string[];
  error?: string;
  /** Every item's verdict (for the count of items not evaluated; not printed). */
  checks?: CheckVerdict[];
  /** The reference's calls with their real responses (for `--examples-out`; not printed). */
  examples?: RecordedExample[];
}

/** Plays a task's reference solution on an environment it holds and grades it. */
async function verifyTask(
  loaded: LoadedTask,
  host: EnvironmentHost,
  envs: SharedEnvironments<ToolEnvironment>,
  judge: Judge | undefined,
): Promise<VerifyRow> {
  if (!loaded.task.reference)
    return {
      id: loaded.task.id,
      reward: null,
      success: null,
      failed: [],
      error: NO_REFERENCE,
    };
  try {
    const env = await environmentFor(loaded, host, envs);
    const play = await playReference(loaded.task, env, {
      python: studioPython,
      baseDir: loaded.baseDir,
      judge,
    }).finally(() => envs.release(env));
    return {
      id: loaded.task.id,
      reward: play.grade.reward,
      success: play.grade.success,
      failed: play.grade.checks
        .filter((c) => c.passed === false)
        .map((c) => `${c.id}: ${c.detail ?? 'failed'}`),
      checks: play.grade.checks,
      examples: referenceExamples(play.transcript),
    };
  } catch (err) {
    return {
      id: loaded.task.id,
      reward: null,
      success: false,
      failed: [],
      error: err instanceof StudioError ? `${err.code}: ${err.message}` : errorMessage(err),
    };
  }
}

async function environmentFor(
  loaded: LoadedTask,
  host: EnvironmentHost,
  envs: SharedEnvironments<ToolEnvironment>,
): Promise<ToolEnvironment> {
  // The servers were read from the task's JSON, so they are JSON (ServerDefinition has no index signature).
  const key = canonicalJson({
    servers: loaded.task.servers as unknown as JsonValue,
    base: loaded.baseDir,
    tools: loaded.task.tools ?? null,
    timeout: loaded.task.limits?.callTimeoutMs ?? null,
  });
  return envs.acquire(key, () => openTaskEnvironment(loaded, host));
}
