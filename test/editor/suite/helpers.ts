/**
 * What the editor tests share: the extension's API, the fixture workspace, a readable snapshot of
 * the Trace Explorer as VS Code would render it, and waiting on the trace library with a timeout.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RehearsalStudioApi } from '../../../src/extension/extension';
import type { TraceTreeNode } from '../../../src/core/explorer/tree';
import { sampleTraceFile } from '../../builders/sampleWorkspace';
import { sampleShadowRun } from '../../builders/samples';
import { withTimeout } from '../timeout';
import { runIdShort } from '../../../src/core/trace/format/ids';

/** `publisher.name` from package.json. */
export const EXTENSION_ID = 'rehearsal-studio.rehearsal-studio';

/** Activates the extension (if VS Code has not yet) and waits for its first scan of the traces. */
export async function studio(): Promise<RehearsalStudioApi> {
  const ext = vscode.extensions.getExtension<RehearsalStudioApi>(EXTENSION_ID);
  assert.ok(
    ext,
    `extension ${EXTENSION_ID} is not loaded: is the repository root the extension development path?`,
  );
  const api = await ext.activate();
  await withTimeout(api.ready, 15_000, 'the first scan of the workspace traces (api.ready)');
  return api;
}

/** The fixture workspace folder (the first, and only, one). */
export function workspaceFolder(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the editor tests need a workspace folder with the sample runs');
  return folder.uri.fsPath;
}

/** The trace file of a run of the fixture workspace. */
export function traceFile(runId: string): string {
  return sampleTraceFile(workspaceFolder(), runId);
}

/** One row of the Trace Explorer: the tree item VS Code renders, and the node it came from. */
export interface Row {
  node: TraceTreeNode;
  item: vscode.TreeItem;
  label: string;
  description: string;
  /** The codicon of the row's icon. */
  icon: string | undefined;
}

/** The rows under `parent` (the runs when omitted), through the provider's public interface. */
export async function rows(api: RehearsalStudioApi, parent?: TraceTreeNode): Promise<Row[]> {
  const nodes = (await api.services.explorer.getChildren(parent)) ?? [];
  return Promise.all(
    nodes.map(async (node) => {
      const item = await api.services.explorer.getTreeItem(node);
      const label = typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
      const description = typeof item.description === 'string' ? item.description : '';
      const icon = item.iconPath instanceof vscode.ThemeIcon ? item.iconPath.id : undefined;
      return { node, item, label, description, icon };
    }),
  );
}

/**
 * The row with this label under `parent`; fails with the labels that are there. At the root a run's
 * id names its row too (the row shows the id without its start stamp).
 */
export async function row(
  api: RehearsalStudioApi,
  label: string,
  parent?: TraceTreeNode,
): Promise<Row> {
  const all = await rows(api, parent);
  const found = all.find(
    (r) => r.label === label || (!parent && r.node.kind === 'run' && r.label === runIdShort(label)),
  );
  assert.ok(
    found,
    `no row ${JSON.stringify(label)} under ${parent ? parent.label : 'the root'}; rows: ${JSON.stringify(all.map((r) => r.label))}`,
  );
  return found;
}

/** Follows a path of labels from the root, e.g. `[runId, 'e1 retail-test-0007', 'turn 2']`. */
export async function rowAt(api: RehearsalStudioApi, labels: string[]): Promise<Row> {
  let current: Row | undefined;
  for (const label of labels) current = await row(api, label, current?.node);
  assert.ok(current, 'rowAt needs at least one label');
  return current;
}

/** The whole tree as indented `label | description` lines, for failure messages. */
export async function outline(
  api: RehearsalStudioApi,
  parent?: TraceTreeNode,
  depth = 0,
): Promise<string[]> {
  const lines: string[] = [];
  for (const r of await rows(api, parent)) {
    lines.push(`${'  '.repeat(depth)}${r.label} | ${r.description}`);
    lines.push(...(await outline(api, r.node, depth + 1)));
  }
  return lines;
}

/**
 * Resolves once `check()` passes, re-checking whenever the trace library reports a change; fails
 * after `timeoutMs` with the last check's error and the tree as it was then.
 */
export function waitForLibrary(
  api: RehearsalStudioApi,
  what: string,
  check: () => Promise<void>,
  timeoutMs = 10_000,
): Promise<void> {
  return waitUntil(
    [api.services.library.onDidChange],
    what,
    check,
    timeoutMs,
    async () => `\nTrace Explorer:\n${(await outline(api)).join('\n')}`,
  );
}

/** Resolves with the next event that satisfies `accept`, or rejects after `ms`. */
export function nextEvent<T>(
  event: vscode.Event<T>,
  accept: (e: T) => boolean,
  ms: number,
  what: string,
): Promise<T> {
  let subscription: vscode.Disposable | undefined;
  const next = new Promise<T>((resolve) => {
    subscription = event((e) => {
      if (accept(e)) resolve(e);
    });
  });
  return withTimeout(next, ms, what).finally(() => subscription?.dispose());
}

/** Closes every editor, so that each test starts from an empty editor area. */
export async function closeAllEditors(): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}

/** The active tab's diff input, or a failure that says what the active tab is. */
export function activeDiffTab(): { tab: vscode.Tab; input: vscode.TabInputTextDiff } {
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  assert.ok(tab, 'no editor tab is active');
  assert.ok(
    tab.input instanceof vscode.TabInputTextDiff,
    `the active tab ${JSON.stringify(tab.label)} is not a diff editor`,
  );
  return { tab, input: tab.input };
}

/**
 * Resolves once `check()` passes, re-checking whenever one of `events` fires; fails after
 * `timeoutMs` with the last check's error (and what `context` adds, such as the tree).
 */
export async function waitUntil(
  events: vscode.Event<unknown>[],
  what: string,
  check: () => Promise<void> | void,
  timeoutMs = 10_000,
  context?: () => Promise<string>,
): Promise<void> {
  let lastError: unknown;
  const attempt = async () => {
    try {
      await check();
      return true;
    } catch (err) {
      lastError = err;
      return false;
    }
  };
  if (await attempt()) return;
  await new Promise<void>((resolve, reject) => {
    let busy = false;
    let again = false;
    const onEvent = async () => {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      do {
        again = false;
        if (await attempt()) {
          done();
          resolve();
          return;
        }
      } while (again);
      busy = false;
    };
    const subscriptions = events.map((e) => e(() => void onEvent()));
    const timer = setTimeout(() => {
      done();
      const message = `timed out after ${timeoutMs} ms waiting for ${what}: ${(lastError as Error)?.message}`;
      void (context ? context() : Promise.resolve('')).then(
        (extra) => reject(new Error(message + extra)),
        () => reject(new Error(message)),
      );
    }, timeoutMs);
    function done() {
      clearTimeout(timer);
      for (const s of subscriptions) s.dispose();
    }
  });
}

/** Writes a copy of the sample shadow run under a new run id and waits until the explorer lists it. */
export async function freshShadowRun(api: RehearsalStudioApi, runId: string): Promise<string> {
  const file = sampleTraceFile(workspaceFolder(), runId);
  await sampleShadowRun(runId).write(file);
  await vscode.commands.executeCommand('rehearsal.refreshTraces');
  await waitForLibrary(api, `the run ${runId}`, async () => {
    await row(api, runId);
  });
  await api.services.annotations.ensure(file);
  return file;
}
