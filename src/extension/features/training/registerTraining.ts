import { existsSync, promises as fs } from 'node:fs';
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
import { runsFolder, STUDIO_FOLDER } from '../../../core/trace/format/discover';
import type { PolicyComparison } from '../../../core/training/comparePolicies';
import { comparePolicies } from '../../../core/training/comparePolicies';
import { comparedSnapshot } from '../../../core/training/dashboard/compareView';
import type { CompareSnapshot } from '../../../core/training/dashboard/compareView';
import { exportDataset } from '../../../core/training/datasetExport';
import { isExported } from '../../../core/training/launch/backends';
import { loadRunSpec } from '../../../core/training/launch/runSpec';
import { EVENTS_FILE } from '../../../core/training/launch/supervisor';
import type { CompareTarget, TrainingRunTarget } from '../../commands';
import { ComparePanel } from './compareFidelityPanel';
import { registerCommand } from '../../registerCommand';
import type { Services } from '../../services';
import {
  policyChoice,
  policyDevice,
  policyThreads,
  runDefaults,
  savePolicyChoice,
} from '../../settings';
import type { TrainingRun } from '../../../core/training/run/trainingRun';
import { ensureTrusted } from '../../trust';
import { pickTrace } from '../../pickers';
import { fsPath, workspaceFolderFor } from '../runs/registerRuns';

/** The run file names the palette offers (examples/training/*.run.json). */
const RUN_FILE_GLOB = '**/*.run.json';

/**
 * Training from the editor: Start Training Run (the command shown first), the dashboard, Cancel,
 * Resume, Open Training Run (replots a run folder), Use Trained Model as Policy and Compare Policy
 * Fidelity (old vs new policy on a held-out trace).
 */
export function registerTrainingFeatures(
  context: vscode.ExtensionContext,
  services: Services,
): void {
  const { training, dashboards } = services;
  const runOf = async (
    target: TrainingRunTarget | undefined,
    placeHolder: string,
    accept: (r: TrainingRun) => boolean,
  ): Promise<TrainingRun | undefined> => {
    if (target) return training.open(target.outDir);
    const candidates = training.all.filter(accept);
    if (candidates.length <= 1) return candidates[0];
    return (
      await vscode.window.showQuickPick(
        candidates.map((r) => ({
          label: r.name,
          description: r.state.status,
          detail: r.outDir,
          run: r,
        })),
        { placeHolder },
      )
    )?.run;
  };

  context.subscriptions.push(
    registerCommand('rehearsal.exportTrainingRows', async (target) => {
      if (!ensureTrusted('export training rows')) return undefined;
      // A run's tree node (its context menu), or what a caller already knows; the rest is asked.
      const given = (target ?? {}) as {
        file?: string;
        out?: string;
        onlyMismatches?: boolean;
        splitByTask?: number;
        /** A run file to offer to start once the rows are written (its rows were missing). */
        thenTrain?: string;
      };
      const file =
        given.file ?? (await pickTrace(services, 'Export training rows from which run?'));
      if (!file) return undefined;
      const onlyMismatches =
        given.onlyMismatches ??
        (
          await vscode.window.showQuickPick(
            [
              {
                label: 'Every call',
                description: 'act and rehearse rows of the whole run (SFT on it)',
                only: false,
              },
              {
                label: 'Only the mismatched calls',
                description:
                  'rows of the calls whose rehearsal missed, with their marks (grounding)',
                only: true,
              },
            ],
            { title: 'Export Training Rows', placeHolder: 'Which calls?' },
          )
        )?.only;
      if (onlyMismatches === undefined) return undefined;
      const folder = workspaceFolderFor(file) ?? path.dirname(file);
      const asked =
        given.out ??
        (await vscode.window.showInputBox({
          title: 'Export Training Rows',
          prompt:
            'Rows file (JSONL), relative to the workspace; split by task into .train.jsonl and .heldout.jsonl',
          value: path.join(STUDIO_FOLDER, 'datasets', 'rows.jsonl'),
          validateInput: (v) =>
            v.trim() === ''
              ? 'Name a file'
              : !v.trim().endsWith('.jsonl')
                ? 'A .jsonl file'
                : undefined,
        }));
      if (!asked) return undefined;
      const out = path.resolve(folder, asked.trim());
      const split = given.splitByTask ?? 0.2;
      try {
        const result = await vscode.window.withProgress(
          {
            location: vscode.ProgressLocation.Notification,
            title: `Rehearsal: exporting training rows from ${path.basename(path.dirname(file))}`,
          },
          () =>
            exportDataset([file], {
              out,
              onlyMismatches,
              ...(split > 0 ? { splitByTask: String(split) } : {}),
            }),
        );
        const shown = result.written.map((w) => `${path.basename(w.file)} (${w.items})`).join(', ');
        const next = given.thenTrain ? ['Start Training Run'] : [];
        void vscode.window
          .showInformationMessage(
            `Rehearsal: exported ${result.summaryText}; wrote ${shown}.`,
            ...next,
            'Open Rows',
          )
          .then((a) => {
            if (a === 'Open Rows' && result.written[0])
              void vscode.window.showTextDocument(vscode.Uri.file(result.written[0].file));
            if (a === 'Start Training Run' && given.thenTrain) void training.start(given.thenTrain);
          });
        return result;
      } catch (err) {
        void vscode.window.showErrorMessage(
          `Rehearsal: cannot export training rows: ${errorMessage(err)}`,
        );
        return undefined;
      }
    }),

    registerCommand('rehearsal.startTrainingRun', async (target) => {
      if (!ensureTrusted('start training runs')) return undefined;
      const file = target ? fsPath(target) : await pickRunFile();
      return file ? training.start(file) : undefined;
    }),

    registerCommand('rehearsal.openTrainingRun', async (target) => {
      const dir = target ? fsPath(target) : await pickRunFolder();
      if (!dir) return undefined;
      if (!existsSync(path.join(dir, EVENTS_FILE))) {
        void vscode.window.showErrorMessage(
          `Rehearsal: ${dir} has no ${EVENTS_FILE}; it is not a training run folder (or its run has not started).`,
        );
        return undefined;
      }
      return dashboards.show(await training.open(dir));
    }),

    registerCommand('rehearsal.cancelTrainingRun', async (target) => {
      const run = await runOf(
        target,
        'Which training run do you want to cancel?',
        (r) => r.attached,
      );
      if (!run || !training.cancel(run))
        void vscode.window.showInformationMessage(
          'Rehearsal: no training run started from this editor is running.',
        );
    }),

    registerCommand('rehearsal.resumeTrainingRun', async (target) => {
      if (!ensureTrusted('resume training runs')) return undefined;
      const run = await runOf(
        target,
        'Which training run do you want to resume?',
        (r) => !r.attached && (r.state.status === 'cancelled' || r.state.status === 'failed'),
      );
      if (!run) {
        void vscode.window.showInformationMessage(
          'Rehearsal: no cancelled or failed training run to resume; open its folder first (Rehearsal: Open Training Run).',
        );
        return undefined;
      }
      return training.resume(run);
    }),

    registerCommand('rehearsal.useTrainedPolicy', async (target) => {
      if (!ensureTrusted('select a policy')) return undefined;
      const run = await runOf(target, "Which training run's model?", (r) => r.model !== undefined);
      const folder = run?.model ?? (await pickModelFolder());
      if (!folder) return undefined;
      const choice: PolicyChoice = { kind: 'modelFolder', folder };
      await savePolicyChoice(choice);
      // The policy host is started per run from this setting, so the next run loads the new model:
      // nothing to restart. A run in progress keeps the policy it started with.
      services.runs.updateStatus();
      const pending = services.runs.running ? ' The run in progress finishes with its policy.' : '';
      void vscode.window.showInformationMessage(
        `Rehearsal: runs now use ${describePolicyChoice(choice)} (${folder}); the policy host loads it at the next run.${pending}`,
      );
      return choice;
    }),

    registerCommand('rehearsal.compareFidelity', async (target) => {
      if (!ensureTrusted('compare policies')) return undefined;
      return compareFidelity(context, services, target ?? {});
    }),
  );
}

/** A run file of the workspace (`*.run.json`), or one browsed to. */
async function pickRunFile(): Promise<string | undefined> {
  type Item = vscode.QuickPickItem & { file?: string };
  const found = await vscode.workspace.findFiles(
    RUN_FILE_GLOB,
    '**/{node_modules,.rehearsal}/**',
    200,
  );
  const items: Item[] = found
    .sort((a, b) => a.fsPath.localeCompare(b.fsPath))
    .map((uri) => ({
      label: path.basename(uri.fsPath),
      description: vscode.workspace.asRelativePath(uri),
      file: uri.fsPath,
    }));
  items.push({
    label: '$(folder-opened) Browse...',
    detail: 'A training run file anywhere (schemas/training-run.schema.json)',
  });
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Rehearsal: Start Training Run',
    placeHolder: 'Which training run file? The exact command is shown before it starts.',
    matchOnDescription: true,
  });
  if (!picked) return undefined;
  if (picked.file) return picked.file;
  return (
    await vscode.window.showOpenDialog({
      canSelectMany: false,
      filters: { 'Training run': ['json'] },
      openLabel: 'Start This Run',
      title: 'Training run file',
    })
  )?.[0]?.fsPath;
}

/** A run folder under the workspace's `.rehearsal/training/`, or one browsed to. */
async function pickRunFolder(): Promise<string | undefined> {
  type Item = vscode.QuickPickItem & { dir?: string };
  const items: Item[] = [];
  for (const ws of vscode.workspace.workspaceFolders ?? []) {
    const root = path.join(ws.uri.fsPath, STUDIO_FOLDER, 'training');
    const names = await fs.readdir(root).catch(() => [] as string[]);
    for (const name of names.sort())
      if (existsSync(path.join(root, name, EVENTS_FILE)))
        items.push({ label: name, description: path.join(root, name), dir: path.join(root, name) });
  }
  items.push({
    label: '$(folder-opened) Browse...',
    detail: 'A run folder anywhere (with events.jsonl)',
  });
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Rehearsal: Open Training Run',
    placeHolder: 'Which run folder? Its dashboard is replotted from events.jsonl.',
  });
  if (!picked) return undefined;
  return (
    picked.dir ??
    (
      await vscode.window.showOpenDialog({
        canSelectFolders: true,
        canSelectFiles: false,
        canSelectMany: false,
        openLabel: 'Open Run',
        title: 'Training run folder',
      })
    )?.[0]?.fsPath
  );
}

async function pickModelFolder(): Promise<string | undefined> {
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

/**
 * Compares the rehearsals of two policies on a held-out trace (the core of `rehearse compare`) and
 * shows the per-tool deltas in a panel. The replays are recorded as runs of the workspace.
 */
async function compareFidelity(
  context: vscode.ExtensionContext,
  services: Services,
  target: CompareTarget,
): Promise<{ comparison: PolicyComparison; panel: ComparePanel } | undefined> {
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
  if (!trace) return undefined;
  const folder =
    workspaceFolderFor(trace) ??
    vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ??
    path.dirname(trace);
  const names = { trace, a: nameOf(a), b: nameOf(b) };
  const panel = new ComparePanel(context.extensionUri, services.output, {
    ...names,
    status: 'running',
    message: 'Starting policy A…',
    notes: [],
  });
  const side = async (choice: PolicyChoice) => ({
    name: nameOf(choice),
    open: () =>
      openPolicyFor(choice, {
        device: policyDevice(),
        threads: policyThreads(),
        log: (l) => services.output.info(`[policy] ${l}`),
      }),
    settings: await settingsForPolicy(choice, runDefaults()),
  });
  let snapshot: CompareSnapshot;
  let comparison: PolicyComparison | undefined;
  try {
    const [sideA, sideB] = [await side(a), await side(b)];
    comparison = await vscode.window.withProgress(
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
            panel.update({ ...names, status: 'running', message, notes: [] });
          },
        });
      },
    );
    for (const replay of [comparison.a, comparison.b])
      if (replay) await services.library.add(replay.run.traceFile);
    const stopped = [comparison.a, comparison.b].find((r) => r && r.run.status !== 'completed');
    snapshot = comparison.comparison
      ? comparedSnapshot(names, comparison.comparison)
      : {
          ...names,
          status: stopped?.run.status === 'cancelled' ? 'cancelled' : 'failed',
          message:
            `The replay with ${stopped?.name} ${stopped?.run.status}: ${stopped?.run.error?.code ?? ''} ${stopped?.run.error?.message ?? ''}`.trim(),
          notes: [],
        };
  } catch (err) {
    snapshot = { ...names, status: 'failed', message: errorMessage(err), notes: [] };
  }
  panel.update(snapshot);
  if (snapshot.status === 'failed')
    void vscode.window.showErrorMessage(`Rehearsal: the comparison failed: ${snapshot.message}`);
  return comparison ? { comparison, panel } : undefined;
}
