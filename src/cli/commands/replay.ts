import { StudioError } from '../../core/base/errors';
import { buildFidelityReport } from '../../core/report/fidelityReport';
import { renderReport } from '../../core/report/reportText';
import { palette } from '../../core/report/textFormat';
import { settingsForStartedPolicy } from '../../core/runner/policyRunSettings';
import { concurrencyArg, concurrencyFor } from '../../core/runner/concurrency';
import { replayTrace } from '../../core/runner/replay';
import { resolveOneTrace } from '../../core/trace/format/discover';
import type { CliIO } from '../io';
import { progressBar } from '../io';
import { parseDialectArg } from '../parseDialectArg';
import { runsFolderArg } from '../runsFolderArg';
import type { PolicyArgs } from '../policyArg';
import { devicesTried, openPolicy, policyJson } from '../policyArg';

/** `rehearse replay <trace> --policy <model>`: re-rehearses every recorded call, no tool executed. */
export async function replayCommand(
  trace: string,
  args: PolicyArgs & {
    out?: string;
    parse?: string;
    concurrency?: string;
    json?: boolean;
    progress?: boolean;
    verbose?: boolean;
  },
  io: CliIO,
): Promise<number> {
  const parse = parseDialectArg(args.parse);
  const concurrency = concurrencyArg(args.concurrency);
  const files = [await resolveOneTrace(trace)];
  const runsDir = runsFolderArg(args.out);
  if (args.policy === 'reference')
    throw new StudioError(
      'USAGE',
      'The reference policy does not rehearse; replay needs a model folder or an endpoint.',
    );
  const policy = await openPolicy(
    args,
    [],
    undefined,
    args.verbose ? (line) => io.err(`[policy] ${line}`) : undefined,
  );
  const bar =
    args.progress === false
      ? undefined
      : progressBar({
          format: 'calls {bar} {value}/{total} | {call}',
          clearOnComplete: true,
          barsize: 24,
        });
  bar?.start(1, 0, { call: '' });
  let summary;
  try {
    summary = await replayTrace({
      source: files[0],
      runsDir,
      policy,
      settings: await settingsForStartedPolicy(policy, parse ? { parse } : {}),
      concurrency: concurrencyFor(concurrency, policy.info.kind),
      onProgress: (p) => {
        bar?.setTotal(p.total);
        bar?.update(p.done, { call: p.callId });
      },
    });
  } finally {
    bar?.stop();
    policy.dispose();
  }
  const report = await buildFidelityReport([summary.traceFile]);
  const devices = args.verbose ? devicesTried(policy) : undefined;
  io.out(
    args.json
      ? JSON.stringify({ run: summary, policy: policyJson(policy), report }, null, 2)
      : `${renderReport(report, palette(io.color))}\n\n${devices ? `${devices}\n` : ''}trace: ${summary.traceFile}`,
  );
  if (summary.status === 'failed') {
    io.err(`rehearse: the replay failed: ${summary.error?.code}: ${summary.error?.message}`);
    return 1;
  }
  return 0;
}
