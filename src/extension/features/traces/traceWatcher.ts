import * as vscode from 'vscode';
import { Disposable } from '../../../core/base/disposable';
import { findRunTraces } from '../../../core/trace/format/discover';
import type { TraceLibrary } from '../../../core/trace/index/library';
import { safeInterval, safeTimeout } from '../../../core/base/timers';

const DEBOUNCE_MS = 150;
const LIVE_POLL_MS = 1000;
/** Every this many live polls, the runs folders are listed for runs the file watcher did not report. */
const SWEEP_EVERY_POLLS = 3;
const OPENED_KEY = 'rehearsal.openedTraces';

/**
 * Keeps the library in step with the workspace: every `.rehearsal/runs/<runId>/trace.jsonl` of every
 * folder, plus traces opened by hand (remembered across reloads). File events are debounced; while
 * a run is unfinished its trace is also polled, since file watchers can miss rapid appends. Every few
 * seconds the runs folders are listed too: a watcher can miss a file created in a folder made a
 * moment before (its watch on the new folder comes too late), and `files.watcherExclude` may leave
 * `.rehearsal` unwatched altogether.
 */
export class TraceWatcher extends Disposable {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly poll: NodeJS.Timeout;
  private polls = 0;
  private sweeping = false;

  constructor(
    private readonly library: TraceLibrary,
    private readonly state: vscode.Memento,
  ) {
    super();
    for (const folder of vscode.workspace.workspaceFolders ?? []) this.watchFolder(folder);
    this._register(vscode.workspace.onDidChangeWorkspaceFolders(() => void this.rescan()));
    this.poll = safeInterval(() => this.pollLiveRuns(), LIVE_POLL_MS);
    this._register({
      dispose: () => {
        clearInterval(this.poll);
        for (const t of this.timers.values()) clearTimeout(t);
      },
    });
  }

  /** Finds every trace again (folders added, runs deleted while closed, manual refresh). */
  async rescan(): Promise<void> {
    const found: string[] = [];
    for (const folder of vscode.workspace.workspaceFolders ?? [])
      found.push(...(await findRunTraces(folder.uri.fsPath)));
    await this.library.setFiles([...new Set([...found, ...this.opened()])]);
  }

  /** Adds a trace that lives outside the workspace's runs folder. */
  async open(file: string): Promise<void> {
    const opened = new Set(this.opened());
    opened.add(file);
    await this.state.update(OPENED_KEY, [...opened]);
    await this.library.add(file);
  }

  private opened(): string[] {
    return this.state.get<string[]>(OPENED_KEY, []);
  }

  private watchFolder(folder: vscode.WorkspaceFolder): void {
    const watcher = this._register(
      vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(folder, '.rehearsal/runs/*/trace.jsonl'),
      ),
    );
    this._register(watcher.onDidCreate((uri) => this.schedule(uri.fsPath)));
    this._register(watcher.onDidChange((uri) => this.schedule(uri.fsPath)));
    this._register(watcher.onDidDelete((uri) => this.library.remove(uri.fsPath)));
  }

  /** Adds the runs folders' traces the library does not know yet (only the listing and a stat each). */
  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const known = new Set(this.library.files);
      for (const folder of vscode.workspace.workspaceFolders ?? []) {
        // Only the run folders it does not know yet are looked into.
        const seen = (file: string) => known.has(file) || this.timers.has(file);
        for (const file of await findRunTraces(folder.uri.fsPath, seen)) this.schedule(file);
      }
    } finally {
      this.sweeping = false;
    }
  }

  private schedule(file: string): void {
    clearTimeout(this.timers.get(file));
    this.timers.set(
      file,
      safeTimeout(() => {
        this.timers.delete(file);
        void this.library.add(file);
      }, DEBOUNCE_MS),
    );
  }

  private pollLiveRuns(): void {
    if (++this.polls % SWEEP_EVERY_POLLS === 0) void this.sweep();
    for (const file of this.library.files) {
      const index = this.library.index(file);
      const head = this.library.head(file);
      if ((index && !index.runEnd) || (head && !head.runEnd)) void this.library.refresh(file);
    }
  }
}
