import type * as vscode from 'vscode';
import type { AnnotationLibrary } from '../core/annotations/library';
import type { AnnotationTreeNode } from '../core/annotations/tree';
import type { TraceLibrary } from '../core/trace/index/library';
import type { TraceTreeNode } from '../core/explorer/tree';
import type { AnnotationsViewProvider } from './annotationsView';
import type { CallDiffDocuments } from './callDiff';
import type { TurnTextDocuments } from './turnText';
import type { RunSummaryPanels } from './runSummaryPanel';
import type { ReviewSession } from './reviewQueue';
import type { CallDiffDecorations } from './diffDecorations';
import type { ReportDocuments } from './reportDocument';
import type { RunController } from './runController';
import type { TraceExplorerProvider } from './traceExplorer';
import type { TrainingDashboards } from './trainingDashboard';
import type { TrainingRuns } from './trainingRuns';
import type { TraceWatcher } from './traceWatcher';
import type { TrajectoryPanels } from './trajectoryPanel';

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
