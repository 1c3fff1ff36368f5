import { studioPython } from '../studioPython';
import { StudioError } from '../../core/base/errors';
import { openTaskEnvironment } from '../../core/tasks/taskEnvironment';
import { loadTasks } from '../../core/tasks/format/loader';
import { resolveTaskArguments } from '../../core/tasks/samples';
import type { FidelityReport } from '../../core/report/fidelityReport';
import { buildFidelityReport } from '../../core/report/fidelityReport';
import { renderReport } from '../../core/report/reportText';
import { palette } from '../../core/report/textFormat';
import { counted } from '../../core/base/counted';
import { concurrencyArg, concurrencyFor } from '../../core/runner/concurrency';
import type { RunSummary } from '../../core/runner/runner';
import { runTasks } from '../../core/runner/runner';
import type { Policy } from '../../core/policy/types';
import type { MemoryKind, RunSettings } from '../../core/runner/settings';
import { MEMORY_KINDS } from '../../core/runner/settings';
import type { RewardRule } from '../../core/tasks/checks/envaceReward';
import { REWARD_RULES } from '../../core/tasks/checks/envaceReward';
import { settingsForStartedPolicy } from '../../core/runner/policyRunSettings';
import { maxExamplesArg, refuseMaxExamplesForEnvace } from '../maxExamplesArg';
import type { CliIO } from '../io';
import { progressBar } from '../io';
import { parseDialectArg } from '../parseDialectArg';
import { runsFolderArg } from '../runsFolderArg';
import type { PolicyArgs } from '../policyArg';
import { devicesTried, openPolicy, policyJson } from '../policyArg';
import type { JudgeArgs } from '../judgeArg';
import { judgeSummaryLines, openJudgeArg } from '../judgeArg';
import type { UserArgs } from '../userArg';
import { userOpenerArg } from '../userArg';
import { requireNumber } from '../../core/base/numbers';
import { OUTSIDE_NUMBERS } from '../../core/base/outsideNumbers';

/** Options of `rehearse run`. */
export interface RunArgs extends PolicyArgs, JudgeArgs, UserArgs {
  mode?: string;
  audit?: boolean;
  episodes?: string;
  concurrency?: string;
  out?: string;
  budget?: string;
  order?: string;
  samples?: string;
  rehearsalRetries?: string;
  temperature?: string;
  seed?: string;
  onParseError?: string;
  reward?: string;
  parse?: string;
  rehearsalTemperature?: string;
  memory?: string;
  json?: boolean;
  progress?: boolean;
  verbose?: boolean;
  calls?: boolean;
  maxExamples?: string;
}

/** A number flag through the one reader, in its documented range (USAGE when out of it). */
function flag(value: string | undefined, name: keyof typeof OUTSIDE_NUMBERS, fallback: number) {
  return requireNumber(value, OUTSIDE_NUMBERS[name], fallback, { text: true });
}

/** `--reward`: the reward rule, validated against `--on-parse-error` (EnvACE's rule ends on any parse error). */
export function rewardRuleArg(value: string | undefined, onParseError?: string): RewardRule {
  const rule = value ?? 'studio';
  if (!(REWARD_RULES as readonly string[]).includes(rule))
    throw new StudioError('USAGE', `--reward must be ${REWARD_RULES.join(' or ')}, not "${rule}".`);
  if (rule === 'envace' && onParseError === 'feedback')
    throw new StudioError(
      'USAGE',
      '--reward envace ends the episode on any parse error, as EnvACE does; leave out --on-parse-error feedback.',
    );
  return rule as RewardRule;
}

/** `--rehearsal-retries`, when given (else the reward rule's default, `withDefaults`). */
export function rehearsalRetriesArg(value: string | undefined): Partial<RunSettings> {
  const retries = requireNumber(value, OUTSIDE_NUMBERS.flagRehearsalRetries, undefined, {
    text: true,
  });
  return retries === undefined ? {} : { rehearsalRetries: retries };
}

/** Settings from the command line, validated. */
export function runSettingsFrom(args: RunArgs): Partial<RunSettings> {
  const mode = args.mode ?? 'shadow';
  if (!['shadow', 'imagine', 'private'].includes(mode))
    throw new StudioError(
      'USAGE',
      `--mode must be shadow, imagine or private, not "${mode}" (replay has its own command: rehearse replay).`,
    );
  if (args.audit && mode !== 'imagine')
    throw new StudioError(
      'USAGE',
      '--audit goes with --mode imagine (shadow mode already runs every tool).',
    );
  const order = args.order ?? 'sequential';
  if (order !== 'parallel' && order !== 'sequential')
    throw new StudioError('USAGE', `--order must be parallel or sequential, not "${order}".`);
  const onParseError = args.onParseError ?? 'end';
  if (onParseError !== 'end' && onParseError !== 'feedback')
    throw new StudioError(
      'USAGE',
      `--on-parse-error must be end or feedback, not "${onParseError}".`,
    );
  const parse = parseDialectArg(args.parse) ?? 'studio';
  const temperature = flag(args.temperature, 'flagTemperature', 0);
  const rehearsalTemperature = requireNumber(
    args.rehearsalTemperature,
    OUTSIDE_NUMBERS.flagRehearsalTemperature,
    undefined,
    { text: true },
  );
  if (rehearsalTemperature !== undefined && mode !== 'private')
    throw new StudioError(
      'USAGE',
      '--rehearsal-temperature goes with --mode private (it samples the imagined episodes).',
    );
  const memory = args.memory ?? 'condensed';
  if (!(MEMORY_KINDS as readonly string[]).includes(memory))
    throw new StudioError(
      'USAGE',
      `--memory must be condensed (the policy writes it), attempts (the imagined attempts themselves) or outcomes (one line per imagined write, no ids), not "${args.memory}".`,
    );
  const seed = flag(args.seed, 'flagSeed', 0);
  return {
    mode: mode as RunSettings['mode'],
    audit: !!args.audit,
    episodesPerTask: flag(args.episodes, 'flagEpisodes', 1),
    rehearsalSamples: flag(args.samples, 'flagSamples', 1),
    ...rehearsalRetriesArg(args.rehearsalRetries),
    privateRehearsal: {
      budget: flag(args.budget, 'flagBudget', 3),
      order,
      ...(rehearsalTemperature !== undefined ? { temperature: rehearsalTemperature } : {}),
      ...(memory !== 'condensed' ? { memory: memory as MemoryKind } : {}),
    },
    sampling: { act: { temperature, seed }, rehearse: { temperature, seed } },
    onParseError,
    reward: rewardRuleArg(args.reward, args.onParseError),
    parse,
    ...maxExamplesArg(args.maxExamples),
  };
}

/** `rehearse run <task-or-folder...>`: plays tasks with a policy, records the trace, prints a summary. */
export async function runCommand(taskPaths: string[], args: RunArgs, io: CliIO): Promise<number> {
  const settings = runSettingsFrom(args);
  const concurrency = concurrencyArg(args.concurrency);
  const runsDir = runsFolderArg(args.out);
  const tasks = await loadTasks(resolveTaskArguments(taskPaths));
  if (tasks.length === 0)
    throw new StudioError('NO_TASKS', `No task files (*.task.json) in ${taskPaths.join(', ')}.`);
  const judge = await openJudgeArg(args);
  const { openUser, user } = userOpenerArg(args);
  const logLines: string[] = [];
  const policy = await openPolicy(
    args,
    tasks.map((t) => t.task),
    (line) => logLines.push(line),
    args.verbose ? (line) => io.err(`[policy] ${line}`) : undefined,
  );
  const runSettings = await settingsForStartedPolicy(policy, settings);
  refuseMaxExamplesForEnvace(runSettings, settings, policy);
  const bar = startEpisodeBar(
    args,
    tasks.length * (settings.episodesPerTask ?? 1),
    tasks[0].task.id,
    policy,
  );
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once('SIGINT', onSigint);
  let summary;
  try {
    summary = await runTasks({
      runsDir,
      tasks,
      policy,
      grade: { python: studioPython, judge },
      openUser,
      user,
      settings: runSettings,
      concurrency: concurrencyFor(concurrency, policy.info.kind),
      signal: abort.signal,
      openEnvironment: (t) =>
        openTaskEnvironment(t, {
          workspaceFolder: process.cwd(),
          log: (l) => logLines.push(l),
          python: studioPython,
        }),
      onProgress: (p) =>
        bar?.update(p.done, {
          inFlight: p.inFlight ?? 0,
          task: p.taskId,
          detail: p.episode
            ? `turn ${p.episode.turns} · ${p.episode.calls} calls`
            : p.ended
              ? `${p.ended.episodeId} ${p.ended.status}`
              : '',
        }),
    });
  } finally {
    bar?.stop();
    process.removeListener('SIGINT', onSigint);
    policy.dispose();
  }
  const report = await buildFidelityReport([summary.traceFile], { listCalls: args.calls });
  return printRunOutcome(summary, report, policy, args, io);
}

/** The episodes progress bar, started (none with `--no-progress`). */
function startEpisodeBar(args: RunArgs, total: number, firstTaskId: string, policy: Policy) {
  const bar =
    args.progress === false
      ? undefined
      : progressBar({
          format: 'episodes {bar} {value}/{total} | {inFlight} in flight | {task} | {detail}',
          hideCursor: true,
          clearOnComplete: true,
          barsize: 24,
        });
  bar?.start(total, 0, {
    inFlight: 0,
    task: firstTaskId,
    detail: `policy ${policy.info.id}${policy.info.device ? ` on ${policy.info.device}` : ''}`,
  });
  return bar;
}

/**
 * Prints the run's report (or JSON) and the trace's path; returns the exit code: 1 when the run
 * failed or episodes could not be played, 130 when it was cancelled, else 0.
 */
function printRunOutcome(
  summary: RunSummary,
  report: FidelityReport,
  policy: Policy,
  args: RunArgs,
  io: CliIO,
): number {
  if (args.json)
    io.out(JSON.stringify({ run: summary, policy: policyJson(policy), report }, null, 2));
  else {
    io.out(renderReport(report, palette(io.color)));
    const judged = judgeSummaryLines(report.notEvaluated);
    if (judged.length) io.out(judged.join('\n'));
    const devices = args.verbose ? devicesTried(policy) : undefined;
    io.out(`\n${devices ? `${devices}\n` : ''}trace: ${summary.traceFile}`);
  }
  if (summary.status === 'failed') {
    io.err(`rehearse: the run failed: ${summary.error?.code}: ${summary.error?.message}`);
    return 1;
  }
  // Episodes that never reached the policy (a server that would not start) make the run's scores say
  // nothing: that is a failure of the run, not a result.
  const notPlayed = report.notPlayed.reduce((n, e) => n + e.count, 0);
  if (notPlayed > 0) {
    const first = report.notPlayed[0];
    io.err(
      `rehearse: ${notPlayed} of ${counted(report.episodes + (report.rehearsals?.episodes ?? 0), 'episode')} could not be played: ${first.code}: ${first.message}`,
    );
    return 1;
  }
  return summary.status === 'cancelled' ? 130 : 0;
}
