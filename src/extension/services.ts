import type * as vscode from 'vscode';
import type { AnnotationLibrary } from '../core/annotations/library';
import type { AnnotationTreeNode } from '../core/annotations/tree';
import type { TraceLibrary } from '../core/trace/index/library';
import type { TraceTreeNode } from '../core/explorer/tree';
import type { AnnotationsViewProvider } from './features/annotations/annotationsView';
import type { CallDiffDocuments } from './features/traces/callDiff';
import type { TurnTextDocuments } from './features/traces/turnText';
import type { RunSummaryPanels } from './features/traces/runSummaryPanel';
import type { ReviewSession } from './features/review/reviewSession';
import type { CallDiffDecorations } from './features/traces/diffDecorations';
import type { ReportDocuments } from './features/traces/reportDocument';
import type { RunController } from './features/runs/runController';
import type { TraceExplorerProvider } from './features/traces/traceExplorer';
import type { TrainingDashboards } from './features/training/trainingDashboard';
import type { TrainingRuns } from './features/training/trainingRuns';
import type { TraceWatcher } from './features/traces/traceWatcher';
import type { TrajectoryPanels } from './features/traces/trajectoryPanel';

/** The long-lived objects of one extension host, built once in `activate()`. */
export interface Services {
  output: vscode.LogOutputChannel;
  library: TraceLibrary;
  watcher: TraceWatcher;
  annotations: AnnotationLibrary;
  explorer: TraceExplorerProvider;
  annotationsView: AnnotationsViewProvider;
  callDiffs: CallDiffDocuments;
  turnTexts: TurnTextDocuments;
  summaries: RunSummaryPanels;
  reports: ReportDocuments;
  decorations: CallDiffDecorations;
  runs: RunController;
  trajectories: TrajectoryPanels;
  training: TrainingRuns;
  dashboards: TrainingDashboards;
  /** The review of a run's mismatches, once its feature has created it. */
  review?: ReviewSession;
  /** The tree views, once their features have created them. */
  explorerTree?: vscode.TreeView<TraceTreeNode>;
  annotationsTree?: vscode.TreeView<AnnotationTreeNode>;
}
