import { resolveTrainerPython } from '../core/training/pythonEnv';
import * as vscode from 'vscode';
import { AnnotationLibrary } from '../core/annotations/library';
import { TraceLibrary } from '../core/trace/index/library';
import { AnnotationsViewProvider } from './features/annotations/annotationsView';
import { CallDiffDocuments } from './features/traces/callDiff';
import { CallDiffDecorations } from './features/traces/diffDecorations';
import { ReportDocuments } from './features/traces/reportDocument';
import { registerAnnotationFeatures } from './features/annotations/registerAnnotations';
import { registerGpuFeatures } from './features/runs/registerGpu';
import { registerJudgeFeatures } from './features/runs/registerJudge';
import { registerRunFeatures } from './features/runs/registerRuns';
import { registerTraceFeatures } from './features/traces/registerTraces';
import { registerTrainerEnvFeatures, trainerPythonOptions } from './features/training/registerTrainerEnv';
import { registerTrainingFeatures } from './features/training/registerTraining';
import { RunController } from './features/runs/runController';
import type { Services } from './services';
import { annotationAuthor, keepPolicySelectionsIn } from './settings';
import { TraceExplorerProvider } from './features/traces/traceExplorer';
import { TraceWatcher } from './features/traces/traceWatcher';
import { TrainingDashboards } from './features/training/trainingDashboard';
import { TrainingRuns } from './features/training/trainingRuns';
import { executeCommand } from './registerCommand';
import { TrajectoryPanels } from './features/traces/trajectoryPanel';
import { TurnTextDocuments } from './features/traces/turnText';
import { RunSummaryPanels } from './features/traces/runSummaryPanel';
import { registerReviewFeatures } from './features/review/registerReview';

/** What the extension hands to other extensions and to its own editor tests. */
export interface RehearsalStudioApi {
  services: Services;
  /** Resolves once the first scan of the workspace's traces (and their annotations) is done. */
  ready: Promise<void>;
}

/** Builds the services, then registers each feature. */
export function activate(context: vscode.ExtensionContext): RehearsalStudioApi {
  const output = vscode.window.createOutputChannel('Rehearsal Studio', { log: true });
  const library = new TraceLibrary();
  const annotations = new AnnotationLibrary(annotationAuthor);
  const callDiffs = new CallDiffDocuments(library);
  // A run that ends or is shown asks for its dashboard or for a follow-up command (Use as policy, Compare, Resume).
  const training = new TrainingRuns((run, action) => {
    if (action === 'show') services.dashboards.show(run);
    else
      void executeCommand(
        action === 'usePolicy'
          ? 'rehearsal.useTrainedPolicy'
          : action === 'compare'
            ? 'rehearsal.compareFidelity'
            : 'rehearsal.resumeTrainingRun',
        { outDir: run.outDir },
      );
  }, trainerPythonOptions(context));
  // Before the run controller listens to configuration changes (it reads the choice then).
  context.subscriptions.push(keepPolicySelectionsIn(context.workspaceState));
  const services: Services = {
    output,
    library,
    annotations,
    callDiffs,
    turnTexts: new TurnTextDocuments(library),
    summaries: new RunSummaryPanels(context.extensionUri, output, library),
    reports: new ReportDocuments(library),
    watcher: new TraceWatcher(library, context.workspaceState),
    explorer: new TraceExplorerProvider(library, annotations),
    annotationsView: new AnnotationsViewProvider(library, annotations),
    decorations: new CallDiffDecorations(library, annotations, callDiffs),
    runs: new RunController(library, context.secrets, output, () => {
      const { python, envDir } = trainerPythonOptions(context)();
      return resolveTrainerPython({ option: python, envDir }).python;
    }),
    trajectories: new TrajectoryPanels({
      extensionUri: context.extensionUri,
      library,
      annotations,
      callDiffs,
      output,
    }),
    training,
    dashboards: new TrainingDashboards({ extensionUri: context.extensionUri, training, output }),
  };
  context.subscriptions.push(
    output,
    library,
    annotations,
    callDiffs,
    services.turnTexts,
    services.summaries,
    services.watcher,
    services.explorer,
    services.annotationsView,
    services.reports,
    services.decorations,
    services.runs,
    services.trajectories,
    training,
    services.dashboards,
  );

  registerTraceFeatures(context, services);
  registerAnnotationFeatures(context, services);
  registerReviewFeatures(context, services);
  registerRunFeatures(context, services);
  registerJudgeFeatures(context);
  registerGpuFeatures(context, services);
  registerTrainingFeatures(context, services);
  registerTrainerEnvFeatures(context, services);

  const ready = services.watcher
    .rescan()
    .then(() => Promise.all(library.files.map((f) => annotations.ensure(f).catch(() => undefined))))
    .then(() => output.info(`Indexed ${library.files.length} trace(s).`));
  return { services, ready };
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
