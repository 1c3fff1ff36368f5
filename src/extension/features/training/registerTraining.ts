import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PolicyChoice } from '../../../core/runner/policyChoice';
import { describePolicyChoice } from '../../../core/runner/policyChoice';
import { STUDIO_FOLDER } from '../../../core/trace/format/discover';
import { exportDataset } from '../../../core/training/datasetExport';
import { EVENTS_FILE } from '../../../core/training/launch/supervisor';
import type { TrainingRun } from '../../../core/training/run/trainingRun';
import type { TrainingRunTarget } from '../../commands';
import { pickTrace } from '../../pickers';
import { executeCommand, registerCommand, showError } from '../../registerCommand';
import type { Services } from '../../services';
import { savePolicyChoice } from '../../settings';
import { ensureTrusted } from '../../trust';
import { fsPath, workspaceFolderFor } from '../../workspacePaths';
import { compareFidelity, pickModelFolder } from './compareFidelity';

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
  followRunAttention(context, services);
  registerExportCommand(context, services);
  registerRunCommands(context, services);
  registerTrainedPolicyCommands(context, services);
}

/** A run that starts or ends asks for its dashboard or for a follow-up command (Use as Policy, Compare, Resume). */
function followRunAttention(context: vscode.ExtensionContext, services: Services): void {
  const { training, dashboards } = services;
  context.subscriptions.push(
    training.onDidAskAttention(({ run, action }) => {
      if (action === 'show') dashboards.show(run);
      else
        void executeCommand(
          action === 'usePolicy'
            ? 'rehearsal.useTrainedPolicy'
            : action === 'compare'
              ? 'rehearsal.compareFidelity'
              : 'rehearsal.resumeTrainingRun',
          { outDir: run.outDir },
        );
    }),
  );
}

/** What Export Training Rows is given: a run's tree node (its context menu), or what a caller already knows. */
interface ExportRequest {
  file?: string;
  out?: string;
  onlyMismatches?: boolean;
  splitByTask?: number;
  /** A run file to offer to start once the rows are written (its rows were missing). */
  thenTrain?: string;
}

/** Export Training Rows: a run's calls as act and rehearse rows, what is not given asked. */
function registerExportCommand(context: vscode.ExtensionContext, services: Services): void {
  context.subscriptions.push(
    registerCommand('rehearsal.exportTrainingRows', async (target) => {
      if (!ensureTrusted('export training rows')) return undefined;
      const given = (target ?? {}) as ExportRequest;
      const file =
        given.file ?? (await pickTrace(services, 'Export training rows from which run?'));
      if (!file) return undefined;
      const onlyMismatches = given.onlyMismatches ?? (await pickExportedCalls());
      if (onlyMismatches === undefined) return undefined;
      const folder = workspaceFolderFor(file) ?? path.dirname(file);
      const asked = given.out ?? (await askRowsFile());
      if (!asked) return undefined;
      const out = path.resolve(folder, asked.trim());
      try {
        return await exportRows(services, file, { ...given, out, onlyMismatches });
      } catch (err) {
        showError(err, { prefix: 'cannot export training rows: ' });
        return undefined;
      }
    }),
  );
}

/** Every call, or only the mismatched ones; undefined when the person stops. */
async function pickExportedCalls(): Promise<boolean | undefined> {
  return (
    await vscode.window.showQuickPick(
      [
        {
          label: 'Every call',
          description: 'act and rehearse rows of the whole run (SFT on it)',
          only: false,
        },
        {
          label: 'Only the mismatched calls',
          description: 'rows of the calls whose rehearsal missed, with their marks (grounding)',
          only: true,
        },
      ],
      { title: 'Export Training Rows', placeHolder: 'Which calls?' },
    )
  )?.only;
}

/** The rows file, relative to the workspace. */
function askRowsFile(): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: 'Export Training Rows',
    prompt:
      'Rows file (JSONL), relative to the workspace; split by task into .train.jsonl and .heldout.jsonl',
    value: path.join(STUDIO_FOLDER, 'datasets', 'rows.jsonl'),
    validateInput: (v) =>
      v.trim() === '' ? 'Name a file' : !v.trim().endsWith('.jsonl') ? 'A .jsonl file' : undefined,
  });
}

/** Writes the rows with progress, then offers them (and the run file that waited for them). */
async function exportRows(
  { training }: Services,
  file: string,
  request: ExportRequest & { out: string; onlyMismatches: boolean },
) {
  const split = request.splitByTask ?? 0.2;
  const result = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Rehearsal: exporting training rows from ${path.basename(path.dirname(file))}`,
    },
    () =>
      exportDataset([file], {
        out: request.out,
        onlyMismatches: request.onlyMismatches,
        ...(split > 0 ? { splitByTask: String(split) } : {}),
      }),
  );
  const shown = result.written.map((w) => `${path.basename(w.file)} (${w.items})`).join(', ');
  const next = request.thenTrain ? ['Start Training Run'] : [];
  void vscode.window
    .showInformationMessage(
      `Rehearsal: exported ${result.summaryText}; wrote ${shown}.`,
      ...next,
      'Open Rows',
    )
    .then((a) => {
      if (a === 'Open Rows' && result.written[0])
        void vscode.window.showTextDocument(vscode.Uri.file(result.written[0].file));
      if (a === 'Start Training Run' && request.thenTrain) void training.start(request.thenTrain);
    });
  return result;
}

/** The run a command means: given, the only candidate, or picked among the candidates. */
async function trainingRunOf(
  { training }: Services,
  target: TrainingRunTarget | undefined,
  placeHolder: string,
  accept: (r: TrainingRun) => boolean,
): Promise<TrainingRun | undefined> {
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
}

/** Start, open (its dashboard), cancel and resume a training run. */
function registerRunCommands(context: vscode.ExtensionContext, services: Services): void {
  const { training, dashboards } = services;
  context.subscriptions.push(
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
      const run = await trainingRunOf(
        services,
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
      const run = await trainingRunOf(
        services,
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
  );
}

/** What a finished run's model is for: Use Trained Model as Policy, Compare Policy Fidelity. */
function registerTrainedPolicyCommands(context: vscode.ExtensionContext, services: Services): void {
  context.subscriptions.push(
    registerCommand('rehearsal.useTrainedPolicy', async (target) => {
      if (!ensureTrusted('select a policy')) return undefined;
      const run = await trainingRunOf(
        services,
        target,
        "Which training run's model?",
        (r) => r.model !== undefined,
      );
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
