import * as vscode from 'vscode';
import { TraceLibrary } from '../core/trace/library';
import { CallDiffDocuments } from './callDiff';
import { registerGpuFeatures } from './features/gpu';
import { registerTraceFeatures } from './features/traces';
import type { Services } from './services';
import { TraceExplorerProvider } from './traceExplorer';
import { TraceWatcher } from './traceWatcher';

/** What the extension hands to other extensions and to its own editor tests. */
export interface RehearsalStudioApi {
  services: Services;
  /** Resolves once the first scan of the workspace's traces is done. */
  ready: Promise<void>;
}

/** Builds the services, then registers each feature. */
export function activate(context: vscode.ExtensionContext): RehearsalStudioApi {
  const output = vscode.window.createOutputChannel('Rehearsal Studio', { log: true });
  const library = new TraceLibrary();
  const watcher = new TraceWatcher(library, context.workspaceState);
  const services: Services = {
    output,
    library,
    watcher,
    explorer: new TraceExplorerProvider(library),
    callDiffs: new CallDiffDocuments(library),
  };
  context.subscriptions.push(output, library, watcher, services.explorer, services.callDiffs);

  registerTraceFeatures(context, services);
  registerGpuFeatures(context, services);

  const ready = watcher.rescan().then(() => output.info(`Indexed ${library.files.length} trace(s).`));
  return { services, ready };
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
