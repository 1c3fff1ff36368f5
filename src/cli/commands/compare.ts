import { counted } from '../../core/base/counted';
import { StudioError } from '../../core/base/errors';
import { annotationsFileFor, readAnnotations } from '../../core/annotations/store';
import { resolveOneTrace } from '../../core/trace/format/discover';
import { renderFidelityComparison } from '../../core/training/compareFidelity';
import type { PolicyComparison } from '../../core/training/comparePolicies';
import { comparePolicies } from '../../core/training/comparePolicies';
import type { CliIO } from '../io';
import { progressBar } from '../io';
import { runsFolderArg } from '../runsFolderArg';
import { openPolicy, policyJson } from '../policyArg';

/** Options of `rehearse compare`. */
export interface CompareArgs {
  policy?: string[];
  model?: string;
  device?: string;
  threads?: string;
  out?: string;
  progress?: boolean;
  json?: boolean;
  onlyMarked?: boolean;
}

/**
 * `rehearse compare <trace> --policy A --policy B`: replays the trace's calls with each policy (the
 * rehearse role only, no tool executed) and prints per-tool deltas of the fidelity scores and of
 * rehearsal validity, B − A. Task success is not compared: replay plays no episode.
 */
export async function compareCommand(trace: string, args: CompareArgs, io: CliIO): Promise<number> {
  const policies = twoRehearsingPolicies(args.policy ?? []);
  const files = [await resolveOneTrace(trace)];
  // --only-marked: the calls a person marked as fidelity errors in the trace's annotations.
  const marked = args.onlyMarked ? await markedCalls(files[0]) : undefined;
  const { result, infos } = await replayWithBoth(files[0], policies, marked, args);
  for (const replay of [result.a, result.b]) {
    if (replay && replay.run.status !== 'completed') {
      io.err(
        `rehearse: the replay with ${replay.name} failed: ${replay.run.error?.code}: ${replay.run.error?.message}`,
      );
      return 1;
    }
  }
  const { a, b, comparison } = result;
  // Both replays completed (checked above), so comparePolicies returned both sides and their comparison.
  if (!b || !comparison)
    throw new Error('comparePolicies returned no comparison for two completed replays.');
  if (args.json) {
    io.out(
      JSON.stringify(
        {
          trace: files[0],
          a: { policy: infos.a, run: a.run, report: a.report },
          b: { policy: infos.b, run: b.run, report: b.report },
          comparison,
          ...(marked ? { onlyMarked: marked.size } : {}),
          taskSuccessNote:
            'Not measured: replay re-rehearses the recorded calls and plays no episode.',
        },
        null,
        2,
      ),
    );
  } else {
    if (marked)
      io.out(
        `only the ${counted(marked.size, 'call')} marked as fidelity errors in ${annotationsFileFor(files[0])}`,
      );
    io.out(renderFidelityComparison(comparison, { a: policies[0], b: policies[1] }));
    io.out(`replays: ${a.run.traceFile}, ${b.run.traceFile}`);
  }
  return 0;
}

/** The two `--policy` values, checked: exactly two, and neither the reference (which does not rehearse). */
function twoRehearsingPolicies(policies: string[]): string[] {
  if (policies.length !== 2)
    throw new StudioError(
      'USAGE',
      `compare needs exactly two policies (--policy A --policy B), got ${policies.length}.`,
    );
  if (policies.includes('reference'))
    throw new StudioError(
      'USAGE',
      'The reference policy does not rehearse; compare needs model folders or endpoints.',
    );
  return policies;
}

/**
 * Replays the trace's calls with policy A, then B, with a progress bar per side (unless
 * `--no-progress` or `--json`); returns the comparison and each policy's description.
 */
async function replayWithBoth(
  traceFile: string,
  policies: string[],
  marked: Set<string> | undefined,
  args: CompareArgs,
): Promise<{
  result: PolicyComparison;
  infos: Partial<Record<'a' | 'b', Record<string, unknown>>>;
}> {
  const runsDir = runsFolderArg(args.out);
  const infos: Partial<Record<'a' | 'b', Record<string, unknown>>> = {};
  let bar: ReturnType<typeof progressBar> | undefined;
  const side = (spec: string) => ({
    name: spec,
    open: () =>
      openPolicy(
        { policy: spec, model: args.model, device: args.device, threads: args.threads },
        [],
      ),
  });
  try {
    const result = await comparePolicies({
      trace: traceFile,
      runsDir,
      a: side(policies[0]),
      b: side(policies[1]),
      calls: marked,
      onPolicy: (which, policy) => {
        infos[which] = policyJson(policy);
        bar?.stop();
        bar =
          args.progress === false || args.json
            ? undefined
            : progressBar({
                format: `${which.toUpperCase()} calls {bar} {value}/{total}`,
                clearOnComplete: true,
                barsize: 24,
              });
        bar?.start(1, 0);
      },
      onProgress: (_which, p) => {
        bar?.setTotal(p.total);
        bar?.update(p.done);
      },
    });
    return { result, infos };
  } finally {
    bar?.stop();
  }
}

/** Ids of the calls of a trace that carry a fidelity-error mark; a usage error when there are none. */
async function markedCalls(traceFile: string): Promise<Set<string>> {
  const file = annotationsFileFor(traceFile);
  const set = await readAnnotations(file);
  const ids = new Set(
    set
      .all()
      .filter((a) => a.verdict === 'error')
      .map((a) => a.callId),
  );
  if (ids.size === 0)
    throw new StudioError(
      'USAGE',
      `--only-marked: no call of ${traceFile} is marked as a fidelity error (${file}). Mark calls in the editor or with \`rehearse annotate <trace> --mismatches\`, or leave --only-marked out.`,
    );
  return ids;
}
