import { settingsForStartedPolicy } from '../runner/policyRunSettings';
import type { Policy } from '../policy/types';
import type { FidelityReport } from '../report/fidelityReport';
import { buildFidelityReport } from '../report/fidelityReport';
import { replayTrace } from '../runner/replay';
import type { RunSummary } from '../runner/runner';
import type { RunSettings } from '../runner/settings';
import type { FidelityComparison } from './compareFidelity';
import { compareFidelity } from './compareFidelity';

/** One side of a comparison: how to start its policy (started when its turn comes, disposed after). */
export interface ComparedPolicy {
  /** How the policy is named in the output (its argument or folder). */
  name: string;
  open: () => Promise<Policy>;
  /** Run settings for its replay; by default what the started policy's model folder recommends (its rehearsal_config.json). */
  settings?: Partial<RunSettings>;
}

/** What {@link comparePolicies} needs. */
export interface ComparePoliciesOptions {
  /** The recorded (held-out) trace whose calls both policies rehearse again. */
  trace: string;
  /** Where the two replay runs are written. */
  runsDir: string;
  a: ComparedPolicy;
  b: ComparedPolicy;
  signal?: AbortSignal;
  /** Only these calls count in the reports (the marked calls of `--only-marked`); all when absent. */
  calls?: ReadonlySet<string>;
  /** Progress of each replay: which side, calls done of total. */
  onProgress?: (side: 'a' | 'b', p: { done: number; total: number }) => void;
  /** Called with each side's policy once started (its info, for the output). */
  onPolicy?: (side: 'a' | 'b', policy: Policy) => void;
}

/** A replay of one side. */
export interface ComparedReplay {
  name: string;
  run: RunSummary;
  report?: FidelityReport;
}

/** The two replays and, when both completed, the per-tool comparison B − A. */
export interface PolicyComparison {
  trace: string;
  a: ComparedReplay;
  b?: ComparedReplay;
  /** Undefined when a replay did not complete (its run says why). */
  comparison?: FidelityComparison;
}

/**
 * `rehearse compare`'s core: replays the trace's calls with policy A, then with policy B (the
 * rehearse role only; no tool is executed), each policy started for its replay and disposed after,
 * and compares the fidelity reports of the two replays per tool. Stops after a replay that failed or
 * was cancelled. Task success is not compared: replay plays no episode.
 */
export async function comparePolicies(options: ComparePoliciesOptions): Promise<PolicyComparison> {
  const replay = async (side: 'a' | 'b', compared: ComparedPolicy): Promise<ComparedReplay> => {
    const policy = await compared.open();
    try {
      options.onPolicy?.(side, policy);
      const run = await replayTrace({
        source: options.trace,
        runsDir: options.runsDir,
        policy,
        settings: compared.settings ?? (await settingsForStartedPolicy(policy)),
        signal: options.signal,
        onProgress: (p) => options.onProgress?.(side, p),
      });
      return { name: compared.name, run };
    } finally {
      policy.dispose();
    }
  };
  const a = await replay('a', options.a);
  if (a.run.status !== 'completed') return { trace: options.trace, a };
  const b = await replay('b', options.b);
  if (b.run.status !== 'completed') return { trace: options.trace, a, b };
  [a.report, b.report] = await Promise.all(
    [a, b].map((r) => buildFidelityReport([r.run.traceFile], { calls: options.calls })),
  );
  return { trace: options.trace, a, b, comparison: compareFidelity(a.report, b.report) };
}
