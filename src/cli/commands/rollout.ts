import { studioPython } from '../studioPython';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import { mixSeed, seededShuffle } from '../../core/base/random';
import { settingsForStartedPolicy } from '../../core/runner/policyRunSettings';
import { concurrencyArg, concurrencyFor } from '../../core/runner/concurrency';
import { runTasks } from '../../core/runner/runner';
import { loadTasks } from '../../core/tasks/format/loader';
import { resolveTaskArguments } from '../../core/tasks/samples';
import { openTaskEnvironment } from '../../core/tasks/taskEnvironment';
import { exportRows } from '../../core/training/exportRows';
import type { CliIO } from '../io';
import { outFileArg } from '../outArg';
import type { PolicyArgs } from '../policyArg';
import { openPolicy } from '../policyArg';
import { rewardRuleArg } from './run';

/** Options of `rehearse rollout`. */
export interface RolloutArgs extends PolicyArgs {
  out?: string;
  episodes?: string;
  concurrency?: string;
  temperature?: string;
  seed?: string;
  group?: string;
  runs?: string;
  audit?: boolean;
  real?: boolean;
  reward?: string;
  actRows?: string;
  batchSize?: string;
  batch?: string;
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
  if (!args.out)
    throw new StudioError(
      'USAGE',
      'Missing --out <rows.jsonl>: where the trainer reads the rollout rows.',
    );
  outFileArg(args.out, '--out', 'the rollout rows, JSONL');
  const episodes = Number(args.episodes ?? 4);
  if (!Number.isInteger(episodes) || episodes < 2)
    throw new StudioError(
      'USAGE',
      `--episodes must be a whole number of at least 2 (a GRPO group), not "${args.episodes}".`,
    );
  const temperature = Number(args.temperature ?? 1);
  const seed = Number(args.seed ?? 0);
  if (!(temperature > 0))
    throw new StudioError(
      'USAGE',
      '--temperature must be above 0: a group of identical greedy rollouts teaches nothing.',
    );
  if (!Number.isInteger(seed))
    throw new StudioError('USAGE', `--seed must be a whole number, not "${args.seed}".`);
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
  const batchSize = args.batchSize === undefined ? undefined : Number(args.batchSize);
  const batch = Number(args.batch ?? 0);
  if (batchSize !== undefined && !(Number.isInteger(batchSize) && batchSize >= 1))
    throw new StudioError(
      'USAGE',
      `--batch-size must be a whole number of at least 1, not "${args.batchSize}".`,
    );
  if (!(Number.isInteger(batch) && batch >= 0))
    throw new StudioError('USAGE', `--batch must be a whole number from 0, not "${args.batch}".`);
  const all = await loadTasks(resolveTaskArguments(taskPaths));
  const tasks = batchSize === undefined ? all : taskBatch(all, batchSize, batch);
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
      rehearse: { temperature, seed: mixSeed(seed, 'rehearse') },
    },
    reward,
  };
  const settings = await settingsForStartedPolicy(policy, chosen);
  // The rows train the policy that played them: a model that reads identifiers as slots trains on slots.
  const identifierSlots = policy.identifierSlots === true;
  const runsDir = path.resolve(args.runs ?? path.join(os.tmpdir(), 'rehearsal-rollouts'));
  let summary;
  try {
    summary = await runTasks({
      runsDir,
      tasks,
      policy,
      grade: { python: studioPython },
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
  await mkdir(path.dirname(path.resolve(args.out)), { recursive: true });
  const out = createWriteStream(args.out);
  const exported = await exportRows(
    [summary.traceFile],
    {
      actSource: 'rollout',
      policyRehearsals: !args.real,
      actualRehearsals: !!args.audit,
      actRows,
      ...(args.real ? { roles: ['act' as const] } : {}),
      group: (taskId) => `${taskId}/${args.group ?? 'rollout'}`,
      identifierSlots,
    },
    (row) => out.write(JSON.stringify(row) + '\n'),
  );
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
  const rewards = summary.episodes.map((e) => e.reward ?? 0);
  const mean = rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length);
  io.out(
    `${summary.episodes.length} ${args.real ? 'real' : 'imagined'} episodes, mean reward ${mean.toFixed(3)}; wrote ${exported.rows.act} act and ${exported.rows.rehearse} rehearse rows to ${args.out} (trace ${summary.traceFile})`,
  );
  return 0;
}
