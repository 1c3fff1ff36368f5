import { studioPython } from '../studioPython';
import * as os from 'node:os';
import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import { writeRootOf, writeStreamInside } from '../../core/base/writePath';
import { mixSeed, seededShuffle } from '../../core/base/random';
import { settingsForStartedPolicy } from '../../core/runner/policyRunSettings';
import { concurrencyArg, concurrencyFor } from '../../core/runner/concurrency';
import { runTasks } from '../../core/runner/runner';
import { loadTasks } from '../../core/tasks/format/loader';
import { resolveTaskArguments } from '../../core/tasks/samples';
import { openTaskEnvironment } from '../../core/tasks/taskEnvironment';
import type { ExportSummary } from '../../core/training/exportRows';
import { exportRows } from '../../core/training/exportRows';
import type { CliIO } from '../io';
import { outFileArg } from '../outArg';
import type { PolicyArgs } from '../policyArg';
import { openPolicy } from '../policyArg';
import { rehearsalRetriesArg, rewardRuleArg } from './run';
import type { JudgeArgs } from '../judgeArg';
import { judgeSummaryLines, openJudgeArg } from '../judgeArg';
import type { UserArgs } from '../userArg';
import { userOpenerArg } from '../userArg';
import { buildFidelityReport } from '../../core/report/fidelityReport';
import { requireNumber } from '../../core/base/numbers';
import { counted } from '../../core/base/counted';
import { OUTSIDE_NUMBERS } from '../../core/base/outsideNumbers';
import type { TaskFile } from '../../core/tasks/format/taskFile';
import { maxExamplesArg, refuseMaxExamplesForEnvace } from '../maxExamplesArg';

/** The rehearse role's default rollout temperature, unless `--temperature` is lower. */
export const DEFAULT_REHEARSE_TEMPERATURE = 0.7;

/** Options of `rehearse rollout`. */
export interface RolloutArgs extends PolicyArgs, JudgeArgs, UserArgs {
  out?: string;
  episodes?: string;
  concurrency?: string;
  temperature?: string;
  rehearseTemperature?: string;
  rehearsalRetries?: string;
  seed?: string;
  group?: string;
  runs?: string;
  audit?: boolean;
  real?: boolean;
  reward?: string;
  actRows?: string;
  batchSize?: string;
  batch?: string;
  maxExamples?: string;
}

/**
 * The `batch`-th batch of `size` tasks: the tasks in a fixed shuffled order (by id, then a seeded
 * shuffle, so batches mix the tasks' domains and folders), cut into consecutive batches that wrap
 * around. Every task is played once before any is played again.
 */
export function taskBatch<T extends { task: { id: string } }>(
  tasks: readonly T[],
  size: number,
  batch: number,
): T[] {
  const order = seededShuffle(
    [...tasks].sort((a, b) => (a.task.id < b.task.id ? -1 : a.task.id > b.task.id ? 1 : 0)),
    mixSeed(0, 'rollout batches'),
  );
  const n = Math.min(size, order.length);
  return Array.from({ length: n }, (_, k) => order[(batch * n + k) % order.length]);
}

/**
 * `rehearse rollout <task...> --policy <dir> --out rows.jsonl`: GRPO's rollouts, played by the studio's
 * own runner in imagine mode with the exported policy (so prompts, parsers and checks have one
 * implementation), written as rollout rows grouped by task: one act row per turn by default, which the
 * trainer's baselines pool per task and role as EnvACE's role-wise GRPO pools its per-step rows
 * (`uid_agentid`), or one per episode (`--act-rows episode`). This is the trainer's `rollouts.command`.
 * `--reward envace` rewards the episodes by EnvACE's rule (rows with an empty text lose its 0.1 penalty).
 * `--real` plays them against the real tools instead (shadow mode, rewards from the real state): the
 * environment-interaction baseline that world rehearsal is measured against; its rows train the act
 * role only, as GRPO without a world model does.
 */
export async function rolloutCommand(
  taskPaths: string[],
  args: RolloutArgs,
  io: CliIO,
): Promise<number> {
  const {
    out: outFile,
    episodes,
    temperature,
    rehearseTemperature,
    seed,
    reward,
    actRows,
    concurrency,
    batchSize,
    batch,
    prompt,
  } = rolloutOptions(args);
  const all = await loadTasks(resolveTaskArguments(taskPaths));
  const tasks = batchSize === undefined ? all : taskBatch(all, batchSize, batch);
  const judge = await openJudgeArg(args);
  const { openUser, user } = userOpenerArg(args);
  const policy = await openPolicy(
    args,
    tasks.map((t) => t.task),
  );
  const chosen = {
    mode: args.real ? ('shadow' as const) : ('imagine' as const),
    audit: !!args.audit,
    episodesPerTask: episodes,
    sampling: {
      act: { temperature, seed },
      rehearse: { temperature: rehearseTemperature, seed: mixSeed(seed, 'rehearse') },
    },
    reward,
    ...rehearsalRetriesArg(args.rehearsalRetries),
    ...prompt,
  };
  const settings = await settingsForStartedPolicy(policy, chosen);
  refuseMaxExamplesForEnvace(settings, chosen, policy);
  // The rows train the policy that played them: a model that reads identifiers as slots trains on slots.
  const identifierSlots = policy.identifierSlots === true;
  const runsDir = path.resolve(args.runs ?? path.join(os.tmpdir(), 'rehearsal-rollouts'));
  let summary;
  try {
    summary = await runTasks({
      runsDir,
      tasks,
      policy,
      grade: { python: studioPython, judge },
      openUser,
      user,
      settings,
      concurrency: concurrencyFor(concurrency, policy.info.kind),
      openEnvironment: (t) =>
        openTaskEnvironment(t, { workspaceFolder: process.cwd(), python: studioPython }),
    });
  } finally {
    policy.dispose();
  }
  if (summary.status !== 'completed')
    throw new StudioError(
      'ROLLOUT_FAILED',
      `The rollout run ${summary.status}: ${summary.error?.code ?? ''} ${summary.error?.message ?? ''}`.trim(),
    );
  const exported = await writeRolloutRows(summary.traceFile, outFile, args, {
    actRows,
    identifierSlots,
    tasks: tasks.map((t) => t.task),
  });
  rolloutLines(summary, exported, outFile, !!args.real).forEach((line) => io.out(line));
  // Judge items that were not evaluated leave the rewards without them: say how many and why.
  if (tasks.some((t) => t.task.checks.some((c) => c.kind === 'judge'))) {
    const report = await buildFidelityReport([summary.traceFile]);
    const judged = judgeSummaryLines(report.notEvaluated);
    if (judged.length) io.out(judged.join('\n'));
  }
  return 0;
}

/** What a rollout says it played and wrote. */
function rolloutLines(
  summary: { episodes: { reward?: number | null }[]; traceFile: string },
  exported: ExportSummary,
  outFile: string,
  real: boolean,
): string[] {
  const rewards = summary.episodes.map((e) => e.reward ?? 0);
  const mean = rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length);
  const lines = [
    `${summary.episodes.length} ${real ? 'real' : 'imagined'} episodes, mean reward ${mean.toFixed(3)}; wrote ${exported.rows.act} act and ${exported.rows.rehearse} rehearse rows to ${outFile} (trace ${summary.traceFile})`,
  ];
  const masked = exported.maskedActRows;
  if (masked)
    lines.push(
      `${counted(masked, 'act row')} left out: ${masked === 1 ? 'its episode' : 'their episodes'} ended on a rehearsal that did not parse (the world model's error, not the act's).`,
    );
  return lines;
}

/** The flags of `rehearse rollout`, checked and read, in the order a user sees their errors. */
function rolloutOptions(args: RolloutArgs) {
  if (!args.out)
    throw new StudioError(
      'USAGE',
      'Missing --out <rows.jsonl>: where the trainer reads the rollout rows.',
    );
  outFileArg(args.out, '--out', 'the rollout rows, JSONL');
  const text = { text: true };
  const episodes = requireNumber(args.episodes, OUTSIDE_NUMBERS.flagRolloutEpisodes, 4, text);
  const temperature = requireNumber(
    args.temperature,
    OUTSIDE_NUMBERS.flagRolloutTemperature,
    1,
    text,
  );
  // Each role may sample at its own temperature; its rows carry it, and the trainer scores them at it.
  // The rehearse role samples cooler by default: a world model's format errors end imagined episodes.
  const rehearseTemperature = requireNumber(
    args.rehearseTemperature,
    OUTSIDE_NUMBERS.flagRolloutRehearseTemperature,
    Math.min(temperature, DEFAULT_REHEARSE_TEMPERATURE),
    text,
  );
  const seed = requireNumber(args.seed, OUTSIDE_NUMBERS.flagSeed, 0, text);
  if (args.real && args.audit)
    throw new StudioError(
      'USAGE',
      '--audit goes with imagined rollouts; --real rollouts already run every tool.',
    );
  const reward = rewardRuleArg(args.reward);
  const actRows = args.actRows ?? 'turn';
  if (actRows !== 'turn' && actRows !== 'episode')
    throw new StudioError(
      'USAGE',
      `--act-rows must be turn (one act row per turn, pooled in the baselines as EnvACE pools them) or episode, not "${args.actRows}".`,
    );
  const concurrency = concurrencyArg(args.concurrency);
  const batchSize = requireNumber(args.batchSize, OUTSIDE_NUMBERS.flagBatchSize, undefined, text);
  const batch = requireNumber(args.batch, OUTSIDE_NUMBERS.flagBatch, 0, text);
  const prompt = maxExamplesArg(args.maxExamples);
  return {
    out: args.out,
    episodes,
    temperature,
    rehearseTemperature,
    seed,
    reward,
    actRows: actRows as 'turn' | 'episode',
    concurrency,
    batchSize,
    batch,
    prompt,
  };
}

/**
 * Writes the rollout trace's rows to the `--out` file: act rows, and rehearse rows unless `--real`.
 * Rehearse prompts are rebuilt with the tasks' examples, which the trace does not hold, so that a
 * row's prompt is the one the policy rehearsed with (`--max-examples`).
 */
async function writeRolloutRows(
  traceFile: string,
  outFile: string,
  args: RolloutArgs,
  rows: { actRows: 'turn' | 'episode'; identifierSlots: boolean; tasks: readonly TaskFile[] },
) {
  const { actRows, identifierSlots } = rows;
  const byId = new Map(rows.tasks.map((t) => [t.id, t]));
  const out = await writeStreamInside(writeRootOf(path.dirname(path.resolve(outFile))), outFile);
  const exported = await exportRows(
    [traceFile],
    {
      actSource: 'rollout',
      policyRehearsals: !args.real,
      actualRehearsals: !!args.audit,
      actRows,
      ...(args.real ? { roles: ['act' as const] } : {}),
      group: (taskId) => `${taskId}/${args.group ?? 'rollout'}`,
      identifierSlots,
      taskInfo: (taskId) => {
        const task = byId.get(taskId);
        return task && { examples: task.examples, system: task.system };
      },
    },
    (row) => out.write(JSON.stringify(row) + '\n'),
  );
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
  return exported;
}
