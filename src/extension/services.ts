import type * as vscode from 'vscode';
import type { TraceLibrary } from '../core/trace/library';
import type { CallDiffDocuments } from './callDiff';
import type { TraceExplorerProvider } from './traceExplorer';
import type { TraceWatcher } from './traceWatcher';

/** The long-lived objects of one extension host, built once in `activate()`. */
export interface Services {
  output: vscode.LogOutputChannel;
  library: TraceLibrary;
  watcher: TraceWatcher;
  explorer: TraceExplorerProvider;
  callDiffs: CallDiffDocuments;
}
