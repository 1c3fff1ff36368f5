import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { describePolicyChoice } from '../../../core/runner/policyChoice';
import { loadTasks, TASK_FILE_SUFFIX } from '../../../core/tasks/format/loader';
import { sampleTasksFolder } from '../../../core/tasks/samples';
import type { LoadedTask } from '../../../core/tasks/format/taskFile';
import type { TaskTarget } from '../../commands';
import { pickPolicy } from './policyPicker';
import { registerCommand, showError } from '../../registerCommand';
import { fsPath, workspaceFolderFor } from '../../workspacePaths';
import { apiKeySecret } from './runController';
import type { Services } from '../../services';
import { policyChoice, savePolicyChoice } from '../../settings';
import { TaskCodeLensProvider } from './taskCodeLens';
import { ensureTrusted } from '../../trust';
import { pickTrace } from '../../pickers';

/** Running from the editor: Run Task (and with private rehearsal), Replay, Stop, Select Policy, the endpoint key. */
export function registerRunFeatures(context: vscode.ExtensionContext, services: Services): void {
  registerTaskRunCommands(context, services);
  registerPolicyCommands(context, services);
}

/** Run Task (and with private rehearsal, beside a task file as CodeLenses), Replay and Stop. */
function registerTaskRunCommands(context: vscode.ExtensionContext, services: Services): void {
  const { runs } = services;
  const runWith =
    (mode: 'shadow' | 'private') => async (target?: TaskTarget, targets?: TaskTarget[]) => {
      if (!ensureTrusted(mode === 'private' ? 'run with private rehearsal' : 'run tasks'))
        return undefined;
      const paths = targets?.length
        ? targets.map(fsPath)
        : target
          ? [fsPath(target)]
          : await pickTaskFiles();
      if (!paths?.length) return undefined;
      let tasks: LoadedTask[];
      try {
        tasks = await loadTasks(paths);
      } catch (err) {
        showError(err);
        return undefined;
      }
      if (tasks.length === 0) {
        void vscode.window.showErrorMessage(
          `Rehearsal: no task files (*${TASK_FILE_SUFFIX}) in ${paths.join(', ')}.`,
        );
        return undefined;
      }
      const folder = workspaceFolderFor(paths[0]);
      if (!folder) {
        void vscode.window.showErrorMessage(
          'Rehearsal: open a folder first; runs are recorded in its .rehearsal/runs.',
        );
        return undefined;
      }
      return runs.runTasks({ tasks, mode, workspaceFolder: folder });
    };

  context.subscriptions.push(
    vscode.languages.registerCodeLensProvider(
      { pattern: `**/*${TASK_FILE_SUFFIX}` },
      new TaskCodeLensProvider(),
    ),
    registerCommand('rehearsal.runTask', runWith('shadow')),
    registerCommand('rehearsal.runTaskPrivate', runWith('private')),

    registerCommand('rehearsal.replayTrace', async (target) => {
      if (!ensureTrusted('replay traces')) return undefined;
      const file =
        target?.file ??
        (await pickTrace(services, 'Which run do you want to replay with the selected policy?'));
      if (!file) return undefined;
      const folder = workspaceFolderFor(file) ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
      if (!folder) {
        void vscode.window.showErrorMessage(
          'Rehearsal: open a folder first; replays are recorded in its .rehearsal/runs.',
        );
        return undefined;
      }
      return runs.replay(file, folder);
    }),

    registerCommand('rehearsal.stopRun', () => {
      if (!runs.stop())
        void vscode.window.showInformationMessage('Rehearsal: no run is in progress.');
    }),
  );
}

/** Select Policy, and the key of an endpoint policy. */
function registerPolicyCommands(context: vscode.ExtensionContext, services: Services): void {
  const { runs } = services;
  context.subscriptions.push(
    registerCommand('rehearsal.selectPolicy', async (choice) => {
      if (!ensureTrusted('select a policy')) return undefined;
      let current;
      try {
        current = policyChoice();
      } catch {
        current = undefined;
      }
      const picked = choice ?? (await pickPolicy(context.secrets, current));
      if (!picked) return undefined;
      await savePolicyChoice(picked);
      runs.updateStatus();
      vscode.window.setStatusBarMessage(
        `Rehearsal: runs now use ${describePolicyChoice(picked)}`,
        4000,
      );
      return picked;
    }),

    registerCommand('rehearsal.setEndpointApiKey', async (key) => {
      if (!ensureTrusted('store an endpoint key')) return;
      let choice;
      try {
        choice = policyChoice();
      } catch {
        choice = undefined;
      }
      if (choice?.kind !== 'endpoint') {
        void vscode.window.showInformationMessage(
          'Rehearsal: select an endpoint policy first (Rehearsal: Select Policy).',
        );
        return;
      }
      const value =
        key ??
        (await vscode.window.showInputBox({
          title: `API key for ${choice.url}`,
          prompt: "Kept in the editor's secret storage, never in settings. Empty removes it.",
          password: true,
          ignoreFocusOut: true,
        }));
      if (value === undefined) return;
      if (value) await context.secrets.store(apiKeySecret(choice.url), value);
      else await context.secrets.delete(apiKeySecret(choice.url));
    }),
  );
}

/** Task files of the workspace and the samples that ship with the studio, to pick from. */
async function pickTaskFiles(): Promise<string[] | undefined> {
  type Item = vscode.QuickPickItem & { file?: string };
  const items: Item[] = [];
  const found = await vscode.workspace.findFiles(
    `**/*${TASK_FILE_SUFFIX}`,
    '**/{node_modules,.rehearsal}/**',
    500,
  );
  if (found.length) {
    items.push({ label: 'Workspace', kind: vscode.QuickPickItemKind.Separator });
    for (const uri of found.sort((a, b) => a.fsPath.localeCompare(b.fsPath)))
      items.push({
        label: path.basename(uri.fsPath, TASK_FILE_SUFFIX),
        description: vscode.workspace.asRelativePath(uri),
        file: uri.fsPath,
      });
  }
  const samples = sampleTasksFolder();
  if (existsSync(samples)) {
    const names = (await fs.readdir(samples)).filter((n) => n.endsWith(TASK_FILE_SUFFIX)).sort();
    if (names.length)
      items.push({
        label: 'Samples of the built-in domains',
        kind: vscode.QuickPickItemKind.Separator,
      });
    for (const n of names) {
      const file = path.join(samples, n);
      let description = 'sample';
      try {
        description =
          (JSON.parse(await fs.readFile(file, 'utf8')) as { description?: string }).description ??
          description;
      } catch {
        /* shown without description */
      }
      items.push({
        label: path.basename(n, TASK_FILE_SUFFIX),
        description,
        detail: 'sample task shipped with Rehearsal Studio',
        file,
      });
    }
  }
  if (!items.some((i) => i.file)) {
    void vscode.window.showInformationMessage(
      `Rehearsal: no task files (*${TASK_FILE_SUFFIX}) in this workspace.`,
    );
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Rehearsal: Run Task',
    placeHolder:
      "Which task? (type to filter; several with the explorer's context menu on a folder)",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return picked?.file ? [picked.file] : undefined;
}
