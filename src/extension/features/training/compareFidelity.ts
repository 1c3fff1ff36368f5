import * as path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from '../../../core/base/errors';
import type { PolicyChoice } from '../../../core/runner/policyChoice';
import {
  choiceRehearses,
  describePolicyChoice,
  modelFolderOf,
  openPolicyFor,
  settingsForPolicy,
} from '../../../core/runner/policyChoice';
import { runsFolder } from '../../../core/trace/format/discover';
import type { PolicyComparison } from '../../../core/training/comparePolicies';
import { comparePolicies } from '../../../core/training/comparePolicies';
import type { CompareSnapshot } from '../../../core/training/dashboard/compareView';
import { comparedSnapshot } from '../../../core/training/dashboard/compareView';
import { isExported } from '../../../core/training/launch/backends';
import { loadRunSpec } from '../../../core/training/launch/runSpec';
import type { CompareTarget } from '../../commands';
import { pickTrace } from '../../pickers';
import type { Services } from '../../services';
import { policyChoice, policyDevice, policyThreads, runDefaults } from '../../settings';
import { workspaceFolderFor } from '../../workspacePaths';
import { ComparePanel } from './compareFidelityPanel';

/** A trained model's folder, browsed to. */
export async function pickModelFolder(): Promise<string | undefined> {
  return (
    await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      canSelectMany: false,
      openLabel: 'Use This Model',
      title: 'Trained model folder (with onnx/model.onnx)',
    })
  )?.[0]?.fsPath;
}

/** Policy A of a comparison: the run's base model, or the current policy; asked when both apply. */
async function pickOldPolicy(
  base: string | undefined,
  b: PolicyChoice,
): Promise<PolicyChoice | undefined> {
  const options: (vscode.QuickPickItem & { choice: PolicyChoice })[] = [];
  if (base && isExported(base))
    options.push({
      label: 'The base model of the run',
      description: base,
      choice: { kind: 'modelFolder', folder: base },
    });
  try {
    const current = policyChoice();
    const same =
      modelFolderOf(current) !== undefined && modelFolderOf(current) === modelFolderOf(b);
    if (
      choiceRehearses(current) &&
      !same &&
      !options.some((o) => modelFolderOf(o.choice) === modelFolderOf(current))
    )
      options.push({
        label: 'The current policy',
        description: describePolicyChoice(current),
        choice: current,
      });
  } catch {
    /* no usable current policy */
  }
  if (options.length <= 1) return options[0]?.choice;
  return (
    await vscode.window.showQuickPick(options, {
      placeHolder: 'Compare the new model (B) against which policy (A)?',
    })
  )?.choice;
}

const nameOf = (choice: PolicyChoice) => modelFolderOf(choice) ?? describePolicyChoice(choice);

/** What a comparison compares: A, B and the held-out trace, given or asked; undefined when the person stops. */
async function comparedPolicies(
  services: Services,
  target: CompareTarget,
): Promise<{ a: PolicyChoice; b: PolicyChoice; trace: string } | undefined> {
  const run = target.outDir ? await services.training.open(target.outDir) : undefined;
  let base = run?.base;
  if (run && !base && run.runFile)
    base = await loadRunSpec(run.runFile).then(
      (s) => s.base,
      () => undefined,
    );
  const bFolder = run?.model ?? (target.b ? undefined : await pickModelFolder());
  const b: PolicyChoice | undefined =
    target.b ?? (bFolder ? { kind: 'modelFolder', folder: bFolder } : undefined);
  if (!b) return undefined;
  const a = target.a ?? (await pickOldPolicy(base, b));
  if (!a) {
    void vscode.window.showInformationMessage(
      'Rehearsal: nothing to compare the model with: select another policy first (Rehearsal: Select Policy), or compare from a run whose base model is exported.',
    );
    return undefined;
  }
  const trace =
    target.trace ??
    (await pickTrace(
      services,
      'Which held-out trace? Both policies rehearse its calls again (no tool runs).',
    ));
  return trace ? { a, b, trace } : undefined;
}

/** One side of a comparison: how to open its policy, and the run settings it replays with. */
async function comparedSide(services: Services, choice: PolicyChoice) {
  return {
    name: nameOf(choice),
    open: () =>
      openPolicyFor(choice, {
        device: policyDevice(),
        threads: policyThreads(),
        log: (l: string) => services.output.info(`[policy] ${l}`),
        probeLog: (l: string) => services.output.debug(`[policy] ${l}`),
      }),
    settings: await settingsForPolicy(choice, runDefaults()),
  };
}

/**
 * Compares the rehearsals of two policies on a held-out trace (the core of `rehearse compare`) and
 * shows the per-tool deltas in a panel. The replays are recorded as runs of the workspace.
 */
export async function compareFidelity(
  context: vscode.ExtensionContext,
  services: Services,
  target: CompareTarget,
): Promise<{ comparison: PolicyComparison; panel: ComparePanel } | undefined> {
  const compared = await comparedPolicies(services, target);
  if (!compared) return undefined;
  const { a, b, trace } = compared;
  const names = { trace, a: nameOf(a), b: nameOf(b) };
  const panel = new ComparePanel(context.extensionUri, services.output, {
    ...names,
    status: 'running',
    message: 'Starting policy A…',
    notes: [],
  });
  let snapshot: CompareSnapshot;
  let comparison: PolicyComparison | undefined;
  try {
    comparison = await replayBoth(services, compared, (message) =>
      panel.update({ ...names, status: 'running', message, notes: [] }),
    );
    snapshot = finalSnapshot(names, comparison);
  } catch (err) {
    snapshot = { ...names, status: 'failed', message: errorMessage(err), notes: [] };
  }
  panel.update(snapshot);
  if (snapshot.status === 'failed')
    void vscode.window.showErrorMessage(`Rehearsal: the comparison failed: ${snapshot.message}`);
  return comparison ? { comparison, panel } : undefined;
}

/** Replays the trace with A and then B, in a cancellable notification; the replays join the library. */
async function replayBoth(
  services: Services,
  { a, b, trace }: { a: PolicyChoice; b: PolicyChoice; trace: string },
  onMessage: (message: string) => void,
): Promise<PolicyComparison> {
  const folder =
    workspaceFolderFor(trace) ??
    vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ??
    path.dirname(trace);
  const [sideA, sideB] = [await comparedSide(services, a), await comparedSide(services, b)];
  const comparison = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: 'Rehearsal: comparing fidelity',
      cancellable: true,
    },
    async (progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      return comparePolicies({
        trace,
        runsDir: runsFolder(folder),
        a: sideA,
        b: sideB,
        signal: abort.signal,
        onProgress: (which, p) => {
          const message = `policy ${which.toUpperCase()}: ${p.done}/${p.total} calls rehearsed`;
          progress.report({ message });
          onMessage(message);
        },
      });
    },
  );
  for (const replay of [comparison.a, comparison.b])
    if (replay) await services.library.add(replay.run.traceFile);
  return comparison;
}

/** The panel's last snapshot: the deltas, or why a replay stopped. */
function finalSnapshot(
  names: { trace: string; a: string; b: string },
  comparison: PolicyComparison,
): CompareSnapshot {
  if (comparison.comparison) return comparedSnapshot(names, comparison.comparison);
  const stopped = [comparison.a, comparison.b].find((r) => r && r.run.status !== 'completed');
  return {
    ...names,
    status: stopped?.run.status === 'cancelled' ? 'cancelled' : 'failed',
    message:
      `The replay with ${stopped?.name} ${stopped?.run.status}: ${stopped?.run.error?.code ?? ''} ${stopped?.run.error?.message ?? ''}`.trim(),
    notes: [],
  };
}
