import { resolveTrainerPython } from '../../../core/training/pythonEnv';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { counted } from '../../../core/base/counted';
import { Disposable } from '../../../core/base/disposable';
import { errorMessage } from '../../../core/base/errors';
import type { Policy } from '../../../core/policy/types';
import { replayTrace } from '../../../core/runner/replay';
import type { RunProgress, RunSummary } from '../../../core/runner/runner';
import { runTasks } from '../../../core/runner/runner';
import type { RunSettings } from '../../../core/runner/settings';
import type { PolicyChoice } from '../../../core/runner/policyChoice';
import {
  choiceRehearses,
  describePolicyChoice,
  openPolicyFor,
  settingsForPolicy,
} from '../../../core/runner/policyChoice';
import { RunStatus } from '../../../core/runner/runStatus';
import { DEFAULT_CONCURRENCY } from '../../../core/runner/concurrency';
import type { InputResolver } from '../../../core/env/variables';
import { openTaskEnvironment } from '../../../core/tasks/taskEnvironment';
import type { LoadedTask, TaskFile } from '../../../core/tasks/format/taskFile';
import { runsFolder, TRACE_FILE } from '../../../core/trace/format/discover';
import { newRunId } from '../../../core/trace/format/ids';
import type { TraceLibrary } from '../../../core/trace/index/library';
import { CONTEXT_KEYS } from '../../commands';
import { executeCommand, showError, showLog } from '../../registerCommand';
import {
  policyChoice,
  policyChoiceSource,
  policyDevice,
  policyThreads,
  runConcurrency,
  judgeSettings,
  runDefaults,
  settingServers,
} from '../../settings';
import type { Judge } from '../../../core/tasks/checks/judge';
import type { JudgeSettingNames } from '../../../core/tasks/checks/judgeEndpoint';
import { JUDGE_API_KEY_ENV, openJudge } from '../../../core/tasks/checks/judgeEndpoint';
import { UNTRUSTED_REASON } from '../../trust';
import { successText } from '../../../core/explorer/successText';

/** How the editor names its judge settings in messages. */
const EDITOR_JUDGE_NAMES: JudgeSettingNames = {
  endpoint: 'rehearsal.judge.endpoint',
  model: 'rehearsal.judge.model',
  key: '"Rehearsal: Set Judge API Key"',
};

/** What a run from the editor was asked to do. */
export interface RunRequest {
  tasks: LoadedTask[];
  mode: 'shadow' | 'private';
  /** The folder whose `.rehearsal/runs` receives the trace. */
  workspaceFolder: string;
}

/** The secret-storage key of an endpoint's API key. */
export function apiKeySecret(url: string): string {
  return `rehearsal.endpoint.apiKey:${url}`;
}

/** The secret-storage key of a judge endpoint's API key. */
export function judgeApiKeySecret(url: string): string {
  return `rehearsal.judge.apiKey:${url}`;
}

/**
 * Runs tasks and replays in the extension host with the core runner (the policy and the MCP
 * servers run in their own processes), one run at a time, with a cancellable progress notification
 * and a status bar item: policy, device, tokens/s, progress. The trace is fed to the library as it is
 * written, so that the Trace Explorer follows the run live.
 */
export class RunController extends Disposable {
  private current: { abort: AbortController; status: RunStatus; traceFile: string } | undefined;
  /** The line the last finished run was announced with (its notification and the log). */
  lastReport: string | undefined;
  readonly statusItem: vscode.StatusBarItem;
  private readonly finished = this._register(new vscode.EventEmitter<RunSummary>());
  /** Fires when a run ends (completed, failed or cancelled). */
  readonly onDidFinish = this.finished.event;

  constructor(
    private readonly library: TraceLibrary,
    private readonly secrets: vscode.SecretStorage,
    private readonly output: vscode.LogOutputChannel,
    /** The studio's Python environment's interpreter (built-in Python servers); may throw. */
    private readonly python: () => string = () => resolveTrainerPython().python,
  ) {
    super();
    this.statusItem = this._register(
      vscode.window.createStatusBarItem('rehearsal.run', vscode.StatusBarAlignment.Left, 10),
    );
    this.statusItem.name = 'Rehearsal Studio';
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('rehearsal.policy')) this.updateStatus();
      }),
    );
    this._register(vscode.workspace.onDidGrantWorkspaceTrust(() => this.updateStatus()));
    this.updateStatus();
    this.statusItem.show();
  }

  /** True while a run is in progress. */
  get running(): boolean {
    return this.current !== undefined;
  }

  /** The trace file of the run in progress. */
  get currentTrace(): string | undefined {
    return this.current?.traceFile;
  }

  /** Stops the run in progress: the episode being played ends as cancelled, the trace stays complete. */
  stop(): boolean {
    if (!this.current) return false;
    this.current.abort.abort();
    return true;
  }

  /** Plays tasks with the selected policy. Resolves with the run's summary, or undefined when nothing ran. */
  async runTasks(request: RunRequest): Promise<RunSummary | undefined> {
    const choice = this.choice();
    if (!choice) return undefined;
    const mode = request.mode;
    if (mode === 'private' && !choiceRehearses(choice)) {
      void vscode.window
        .showErrorMessage(
          "Rehearsal: private rehearsal imagines episodes with the policy's rehearsals; the reference policy does not rehearse. Select a model folder or an endpoint.",
          'Select Policy',
        )
        .then((a) => {
          if (a) void executeCommand('rehearsal.selectPolicy');
        });
      return undefined;
    }
    const runsDir = runsFolder(request.workspaceFolder);
    const runId = newRunId(mode);
    const what =
      request.tasks.length === 1 ? request.tasks[0].task.id : `${request.tasks.length} tasks`;
    return this.withRun(
      `Rehearsal: ${mode === 'private' ? 'private rehearsal of' : 'running'} ${what} with ${describePolicyChoice(choice)}`,
      path.join(runsDir, runId, TRACE_FILE),
      choice,
      'episodes',
      request.tasks.map((t) => t.task),
      async (policy, status, signal, feed) => {
        const settings = await settingsForPolicy(choice, {
          ...runDefaults(),
          mode,
        } as Partial<RunSettings>);
        // Every slot of episodes in flight opens its own servers: an `${input:ID}` is asked once per run.
        const inputs = new Map<string, Promise<string | undefined>>();
        const resolveInput: InputResolver = (id, input) => {
          let answer = inputs.get(id);
          if (!answer) {
            answer = Promise.resolve(
              vscode.window.showInputBox({
                prompt: input?.description ?? `Value for \${input:${id}} (.vscode/mcp.json)`,
                value: input?.default,
                password: input?.password === true,
                ignoreFocusOut: true,
              }),
            ).then((v) => v ?? undefined);
            inputs.set(id, answer);
          }
          return answer;
        };
        const judge = await this.openJudge();
        return runTasks({
          runsDir,
          runId,
          tasks: request.tasks,
          policy,
          grade: { python: this.python, judge },
          settings,
          concurrency: runConcurrency() ?? DEFAULT_CONCURRENCY[policy.info.kind],
          signal,
          openEnvironment: (t) =>
            openTaskEnvironment(t, {
              workspaceFolder: request.workspaceFolder,
              settingServers: settingServers(),
              resolveInput,
              log: (line) => this.output.info(`[server] ${line}`),
              python: this.python,
            }),
          onEvent: (e) => {
            status.observe(e);
            feed();
          },
          onProgress: (p) => {
            status.progress(p);
            feed(p);
          },
        });
      },
    );
  }

  /** Re-rehearses every call of a recorded trace with the selected policy (no tool runs). */
  async replay(source: string, workspaceFolder: string): Promise<RunSummary | undefined> {
    const choice = this.choice();
    if (!choice) return undefined;
    if (!choiceRehearses(choice)) {
      void vscode.window
        .showErrorMessage(
          'Rehearsal: replay re-runs the rehearse role, and the reference policy does not rehearse. Select a model folder or an endpoint.',
          'Select Policy',
        )
        .then((a) => {
          if (a) void executeCommand('rehearsal.selectPolicy');
        });
      return undefined;
    }
    const runsDir = runsFolder(workspaceFolder);
    const runId = newRunId('replay');
    return this.withRun(
      `Rehearsal: replaying ${path.basename(path.dirname(source))} with ${describePolicyChoice(choice)}`,
      path.join(runsDir, runId, TRACE_FILE),
      choice,
      'calls',
      [],
      async (policy, status, signal, feed) => {
        const settings = await settingsForPolicy(choice, runDefaults());
        return replayTrace({
          source,
          runsDir,
          runId,
          policy,
          settings,
          concurrency: runConcurrency() ?? DEFAULT_CONCURRENCY[policy.info.kind],
          signal,
          onProgress: (p) => {
            status.progress({ done: p.done, total: p.total, taskId: p.callId });
            feed();
          },
        });
      },
    );
  }

  /**
   * The judge `rehearsal.judge.*` names, with its key from secret storage (else the environment's
   * REHEARSAL_JUDGE_API_KEY); undefined when no endpoint is set. Throws a coded error that says
   * which setting to fix.
   */
  private async openJudge(): Promise<Judge | undefined> {
    const { endpoint, model } = judgeSettings();
    if (!endpoint) return undefined;
    const apiKey =
      (await this.secrets.get(judgeApiKeySecret(endpoint))) ??
      (process.env[JUDGE_API_KEY_ENV] || undefined);
    const opened = await openJudge({ endpoint, model, apiKey, names: EDITOR_JUDGE_NAMES });
    this.output.info(`judge: ${opened.model} at ${endpoint}`);
    return opened.judge;
  }

  private choice(): PolicyChoice | undefined {
    if (!vscode.workspace.isTrusted) {
      void vscode.window
        .showWarningMessage(
          `Rehearsal: cannot start a run. ${UNTRUSTED_REASON}`,
          'Manage Workspace Trust',
        )
        .then((a) => {
          if (a) void vscode.commands.executeCommand('workbench.trust.manage');
        });
      return undefined;
    }
    if (this.current) {
      void vscode.window
        .showWarningMessage(
          'Rehearsal: a run is in progress; stop it first (Rehearsal: Stop Run).',
          'Stop Run',
        )
        .then((a) => {
          if (a) this.stop();
        });
      return undefined;
    }
    try {
      return policyChoice();
    } catch (err) {
      showError(err, {
        actions: [{ label: 'Select Policy', run: () => executeCommand('rehearsal.selectPolicy') }],
      });
      return undefined;
    }
  }

  private async withRun(
    title: string,
    traceFile: string,
    choice: PolicyChoice,
    what: string,
    tasks: TaskFile[],
    body: (
      policy: Policy,
      status: RunStatus,
      signal: AbortSignal,
      feed: (p?: RunProgress) => void,
    ) => Promise<RunSummary>,
  ): Promise<RunSummary | undefined> {
    const abort = new AbortController();
    this.current = {
      abort,
      status: new RunStatus(describePolicyChoice(choice), undefined, what),
      traceFile,
    };
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.running, true);
    this.updateStatus();
    let summary: RunSummary | undefined;
    try {
      summary = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => abort.abort());
          progress.report({ message: 'starting the policy…' });
          const policy = await this.openPolicy(choice, tasks);
          try {
            const status = new RunStatus(describePolicyChoice(choice), policy.info.device, what);
            this.current!.status = status;
            this.updateStatus();
            const feed = this.progressFeed(status, traceFile, what, progress);
            const result = await body(policy, status, abort.signal, feed);
            await this.library.add(traceFile);
            return result;
          } finally {
            policy.dispose();
          }
        },
      );
    } catch (err) {
      this.output.error(errorMessage(err));
      showError(err, { prefix: 'the run could not start: ', actions: [showLog(this.output)] });
    } finally {
      this.current = undefined;
      void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.running, false);
      this.updateStatus();
    }
    if (summary) {
      this.finished.fire(summary);
      this.report(summary);
    }
    return summary;
  }

  /** Opens the policy of a run: an endpoint's key from secret storage or the environment. */
  private async openPolicy(choice: PolicyChoice, tasks: TaskFile[]): Promise<Policy> {
    const apiKey =
      choice.kind === 'endpoint'
        ? ((await this.secrets.get(apiKeySecret(choice.url))) ??
          process.env.REHEARSAL_API_KEY ??
          process.env.OPENAI_API_KEY)
        : undefined;
    return openPolicyFor(choice, {
      device: policyDevice(),
      threads: policyThreads(),
      apiKey,
      tasks,
      log: (l) => this.output.info(`[policy] ${l}`),
      // Shown when the output channel's level is Debug or Trace ("Developer: Set Log Level").
      probeLog: (l) => this.output.debug(`[policy] ${l}`),
    });
  }

  /** What a run calls on progress: the explorer refreshed, the status bar and the notification's count. */
  private progressFeed(
    status: RunStatus,
    traceFile: string,
    what: string,
    progress: vscode.Progress<{ message?: string; increment?: number }>,
  ): (p?: RunProgress) => void {
    const refresh = this.liveRefresher(traceFile);
    let lastDone = -1;
    return (p?: RunProgress) => {
      refresh();
      this.updateStatus();
      const counts = status.counts;
      if (counts && counts.done !== lastDone) {
        const increment =
          lastDone < 0 ? 0 : (100 * (counts.done - lastDone)) / Math.max(1, counts.total);
        lastDone = counts.done;
        progress.report({
          increment,
          message: `${counts.done}/${counts.total} ${what}${p?.taskId ? ` · ${p.taskId}` : ''}`,
        });
      }
    };
  }

  // Coalesces refreshes: at most one in flight, and one more if events arrived meanwhile.
  private liveRefresher(traceFile: string): () => void {
    let busy = false;
    let again = false;
    return () => {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      void (async () => {
        do {
          again = false;
          await (this.library.index(traceFile)
            ? this.library.refresh(traceFile)
            : this.library.add(traceFile));
        } while (again);
        busy = false;
      })();
    };
  }

  private report(summary: RunSummary): void {
    const n = summary.episodes.length;
    const rewards = summary.episodes.map((e) => e.reward).filter((r): r is number => r !== null);
    const successes = summary.episodes.filter((e) => e.success === true).length;
    const graded = summary.episodes.filter((e) => e.success !== null).length;
    const mean = rewards.length
      ? ` · mean reward ${(rewards.reduce((a, b) => a + b, 0) / rewards.length).toFixed(2)}`
      : '';
    const line = `${summary.runId}: ${summary.status}, ${counted(n, 'episode')}, ${successText(successes, graded, n)}${mean}`;
    this.lastReport = line;
    this.output.info(`run ${line}`);
    const actions = ['Show Report', 'Open Trajectory'];
    const shown =
      summary.status === 'failed'
        ? vscode.window.showErrorMessage(
            `Rehearsal: run ${line}: ${summary.error?.code}: ${summary.error?.message}`,
            ...actions,
          )
        : vscode.window.showInformationMessage(`Rehearsal: run ${line}`, ...actions);
    void shown.then((a) => {
      if (a === 'Show Report')
        void executeCommand('rehearsal.showReport', { file: summary.traceFile });
      if (a === 'Open Trajectory' && summary.episodes[0])
        void executeCommand('rehearsal.openTrajectory', {
          file: summary.traceFile,
          episodeId: summary.episodes[0].episodeId,
        });
    });
  }

  /** Shows the policy when idle, the run when running, and "view only" in an untrusted workspace. */
  updateStatus(): void {
    const item = this.statusItem;
    if (!vscode.workspace.isTrusted) {
      item.text = '$(shield) Rehearsal: view only';
      item.tooltip = UNTRUSTED_REASON;
      item.command = 'workbench.trust.manage';
      return;
    }
    if (this.current) {
      item.text = `$(sync~spin) ${this.current.status.parts().join(' · ')}`;
      item.tooltip = `${this.current.status.details()}\n\nClick to stop the run.`;
      item.command = 'rehearsal.stopRun';
      return;
    }
    let label: string;
    try {
      label = describePolicyChoice(policyChoice());
    } catch {
      label = 'no policy';
    }
    item.text = `$(hubot) ${label} · ${policyDevice()}`;
    const source =
      policyChoiceSource() === 'selection'
        ? 'chosen with Select Policy for this workspace'
        : 'from the settings (rehearsal.policy)';
    item.tooltip = `Rehearsal Studio policy: ${label} (${source}), device setting ${policyDevice()}. Click to select another policy.`;
    item.command = 'rehearsal.selectPolicy';
  }
}
