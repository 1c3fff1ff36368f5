import * as vscode from 'vscode';
import { AnnotationLibrary } from '../core/annotations/library';
import type { AnnotationTreeNode } from '../core/annotations/tree';
import type { TraceTreeNode } from '../core/explorer/tree';
import { TraceLibrary } from '../core/trace/index/library';
import { resolveTrainerPython } from '../core/training/pythonEnv';
import { VIEWS } from './commands';
import { AnnotationsViewProvider } from './features/annotations/annotationsView';
import { ReviewSession } from './features/review/reviewSession';
import { RunController } from './features/runs/runController';
import { CallDiffDocuments } from './features/traces/callDiff';
import { CallDiffDecorations } from './features/traces/diffDecorations';
import { ReportDocuments } from './features/traces/reportDocument';
import { RunSummaryPanels } from './features/traces/runSummaryPanel';
import { TraceExplorerProvider } from './features/traces/traceExplorer';
import { TraceWatcher } from './features/traces/traceWatcher';
import { TrajectoryPanels } from './features/traces/trajectoryPanel';
import { TurnTextDocuments } from './features/traces/turnText';
import { trainerPythonOptions } from './features/training/trainerPython';
import { TrainingDashboards } from './features/training/trainingDashboard';
import { TrainingRuns } from './features/training/trainingRuns';
import { ErrorNotifier, useErrorNotifier } from './registerCommand';
import { annotationAuthor, keepPolicySelectionsIn } from './settings';

/** The long-lived objects of one extension host, built whole by {@link createServices} in `activate()`. */
export interface Services {
  output: vscode.LogOutputChannel;
  /** Shows every command's errors (a StudioError with its action). */
  errors: ErrorNotifier;
  library: TraceLibrary;
  watcher: TraceWatcher;
  annotations: AnnotationLibrary;
  explorer: TraceExplorerProvider;
  explorerTree: vscode.TreeView<TraceTreeNode>;
  annotationsView: AnnotationsViewProvider;
  annotationsTree: vscode.TreeView<AnnotationTreeNode>;
  callDiffs: CallDiffDocuments;
  turnTexts: TurnTextDocuments;
  summaries: RunSummaryPanels;
  reports: ReportDocuments;
  decorations: CallDiffDecorations;
  runs: RunController;
  trajectories: TrajectoryPanels;
  training: TrainingRuns;
  dashboards: TrainingDashboards;
  /** The review of a run's mismatches. */
  review: ReviewSession;
}

/**
 * Builds every service by plain constructor calls, each after what it depends on, and hands them
 * all to `context.subscriptions`. Nothing is assigned later: features only use them.
 */
export function createServices(context: vscode.ExtensionContext): Services {
  const { extensionUri, workspaceState, secrets } = context;
  const output = vscode.window.createOutputChannel('Rehearsal Studio', { log: true });
  const errors = new ErrorNotifier(output);
  const library = new TraceLibrary();
  const annotations = new AnnotationLibrary(annotationAuthor);
  const callDiffs = new CallDiffDocuments(library);
  const explorer = new TraceExplorerProvider(library, annotations);
  const annotationsView = new AnnotationsViewProvider(library, annotations);
  const training = new TrainingRuns(trainerPythonOptions(context));
  // Before the run controller listens to configuration changes (it reads the choice then).
  context.subscriptions.push(
    output,
    useErrorNotifier(errors),
    keepPolicySelectionsIn(workspaceState),
  );
  const services: Services = {
    output,
    errors,
    library,
    annotations,
    callDiffs,
    explorer,
    annotationsView,
    explorerTree: vscode.window.createTreeView(VIEWS.traceExplorer, {
      treeDataProvider: explorer,
      showCollapseAll: true,
      canSelectMany: true,
    }),
    annotationsTree: vscode.window.createTreeView(VIEWS.annotations, {
      treeDataProvider: annotationsView,
      showCollapseAll: true,
    }),
    turnTexts: new TurnTextDocuments(library),
    summaries: new RunSummaryPanels(extensionUri, output, library),
    reports: new ReportDocuments(library),
    watcher: new TraceWatcher(library, workspaceState),
    decorations: new CallDiffDecorations(library, annotations, callDiffs),
    runs: new RunController(library, secrets, output, () => {
      const { python, envDir } = trainerPythonOptions(context)();
      return resolveTrainerPython({ option: python, envDir }).python;
    }),
    trajectories: new TrajectoryPanels({ extensionUri, library, annotations, callDiffs, output }),
    training,
    dashboards: new TrainingDashboards({ extensionUri, training, output }),
    review: new ReviewSession({ library, annotations, callDiffs }, workspaceState),
  };
  context.subscriptions.push(
    library,
    annotations,
    callDiffs,
    explorer,
    annotationsView,
    services.explorerTree,
    services.annotationsTree,
    services.turnTexts,
    services.summaries,
    services.reports,
    services.watcher,
    services.decorations,
    services.runs,
    services.trajectories,
    training,
    services.dashboards,
    services.review,
  );
  return services;
}
