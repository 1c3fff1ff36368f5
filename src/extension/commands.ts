/**
 * Every command the extension contributes, with the arguments it takes. A unit test checks that
 * package.json's contributions match this table.
 */
import type { AnnotationKind, AnnotationSeverity } from '../core/annotations/schema';
import type { AnnotationTreeNode } from '../core/annotations/tree';
import type { PolicyChoice } from '../core/runner/policyChoice';
import type { TraceTreeNode } from '../core/explorer/tree';
import type { TreeFilter, TreeSort } from '../core/explorer/treeFilter';

/** A call to diff: given by id, or the tree node a context menu passes. */
export type CallTarget = { file: string; callId: string } | TraceTreeNode;

/** A call (or one JSON path of it) to mark; with `kind` and `severity` nothing is asked. */
export type MarkTarget =
  | TraceTreeNode
  | {
      file: string;
      callId: string;
      path?: string;
      kind?: AnnotationKind;
      severity?: AnnotationSeverity;
      note?: string;
    };

/** An annotation, by id or as the Annotations view passes it. */
export type AnnotationTarget = { file: string; annotationId: string } | AnnotationTreeNode;

/** A file or folder, as a path or as explorer menus pass it. */
export type PathTarget = { fsPath: string } | string;

/** What a task command runs: a task file or folder (as explorer menus and CodeLenses pass it), or several. */
export type TaskTarget = PathTarget;

/** A training run, by its run folder. */
export type TrainingRunTarget = { outDir: string };

/**
 * A fidelity comparison: policy A (the old one) against B (the new one) on a held-out trace. With
 * `outDir`, B is that run's exported model and A its base; what is missing is asked.
 */
export type CompareTarget = { outDir?: string; a?: PolicyChoice; b?: PolicyChoice; trace?: string };

/**
 * What Export Training Rows exports: a run (its tree node, or `file`), where to (`out`, asked when
 * missing), which calls (`onlyMismatches`, asked when missing) and the held-out fraction of tasks
 * (`splitByTask`, default 0.2: `<out>.train.jsonl` and `<out>.heldout.jsonl`; 0 for one file).
 */
export type ExportRowsTarget =
  TraceTreeNode | { file?: string; out?: string; onlyMismatches?: boolean; splitByTask?: number };

/** An episode to show in the Trajectory panel. */
export type EpisodeTarget =
  | {
      file: string;
      episodeId: string;
      callId?: string;
      /** Beside the active editor, leaving it the focus (a review's T). */
      beside?: boolean;
    }
  | TraceTreeNode;

export interface CommandArgs {
  'rehearsal.refreshTraces': [];
  'rehearsal.openTrace': [file?: string];
  'rehearsal.showCallDiff': [target?: CallTarget];
  'rehearsal.showReport': [target?: { file: string } | TraceTreeNode];
  'rehearsal.showRunSummary': [target?: { file: string } | TraceTreeNode];
  'rehearsal.compareRuns': [
    a?: { file: string } | TraceTreeNode,
    b?: { file: string } | TraceTreeNode,
  ];
  'rehearsal.installGpuSupport': [];
  'rehearsal.runTask': [target?: TaskTarget, targets?: TaskTarget[]];
  'rehearsal.runTaskPrivate': [target?: TaskTarget, targets?: TaskTarget[]];
  'rehearsal.replayTrace': [target?: { file: string } | TraceTreeNode];
  'rehearsal.stopRun': [];
  'rehearsal.selectPolicy': [choice?: PolicyChoice];
  'rehearsal.setEndpointApiKey': [key?: string];
  'rehearsal.setJudgeApiKey': [key?: string];
  'rehearsal.markFidelityError': [target?: MarkTarget];
  'rehearsal.markPathAtCursor': [];
  'rehearsal.reviewMismatches': [target?: { file: string } | TraceTreeNode];
  'rehearsal.reviewMark': [];
  'rehearsal.reviewAccept': [];
  'rehearsal.reviewSkip': [];
  'rehearsal.reviewStop': [];
  'rehearsal.reviewTrajectory': [];
  'rehearsal.reviewActions': [];
  'rehearsal.showTurnText': [target?: { file: string; turnId: string } | TraceTreeNode];
  'rehearsal.acceptRehearsal': [target?: CallTarget & { note?: string }];
  'rehearsal.editAnnotation': [
    target?: AnnotationTarget,
    changes?: { kind?: AnnotationKind; severity?: AnnotationSeverity; note?: string },
  ];
  'rehearsal.deleteAnnotation': [target?: AnnotationTarget];
  'rehearsal.openAnnotation': [target?: AnnotationTarget];
  'rehearsal.openTrajectory': [target?: EpisodeTarget];
  'rehearsal.filterExplorer': [filter?: TreeFilter];
  'rehearsal.searchExplorer': [text?: string];
  'rehearsal.sortExplorer': [sort?: TreeSort];
  'rehearsal.clearExplorerFilter': [];
  'rehearsal.showMore': [file?: string];
  'rehearsal.startTrainingRun': [runFile?: PathTarget];
  'rehearsal.exportTrainingRows': [target?: ExportRowsTarget];
  'rehearsal.openTrainingRun': [outDir?: PathTarget];
  'rehearsal.cancelTrainingRun': [target?: TrainingRunTarget];
  'rehearsal.resumeTrainingRun': [target?: TrainingRunTarget];
  'rehearsal.useTrainedPolicy': [target?: TrainingRunTarget];
  'rehearsal.compareFidelity': [target?: CompareTarget];
  'rehearsal.setUpTrainer': [];
  'rehearsal.startOtlpReceiver': [];
  'rehearsal.stopOtlpReceiver': [];
}

/** A command id. */
export type CommandId = keyof CommandArgs;

/** Titles as the palette shows them (category "Rehearsal"). */
export const COMMANDS: { [K in CommandId]: { title: string; icon?: string } } = {
  'rehearsal.refreshTraces': { title: 'Refresh Trace Explorer', icon: '$(refresh)' },
  'rehearsal.openTrace': { title: 'Open Trace...', icon: '$(folder-opened)' },
  'rehearsal.showCallDiff': { title: 'Show Call Diff (Rehearsed vs Actual)', icon: '$(diff)' },
  'rehearsal.showReport': { title: 'Show Fidelity Report', icon: '$(graph)' },
  'rehearsal.showRunSummary': { title: 'Show Run Summary', icon: '$(table)' },
  'rehearsal.compareRuns': { title: 'Compare Runs...', icon: '$(diff-multiple)' },
  'rehearsal.installGpuSupport': { title: 'Install GPU Support', icon: '$(chip)' },
  'rehearsal.startOtlpReceiver': {
    title: 'Receive OpenTelemetry Traces (OTLP)',
    icon: '$(radio-tower)',
  },
  'rehearsal.stopOtlpReceiver': {
    title: 'Stop Receiving OpenTelemetry Traces',
    icon: '$(debug-stop)',
  },
  'rehearsal.runTask': { title: 'Run Task...', icon: '$(play)' },
  'rehearsal.runTaskPrivate': { title: 'Run with Private Rehearsal...', icon: '$(run-all)' },
  'rehearsal.replayTrace': { title: 'Replay Trace with Policy...', icon: '$(debug-rerun)' },
  'rehearsal.stopRun': { title: 'Stop Run', icon: '$(debug-stop)' },
  'rehearsal.selectPolicy': { title: 'Select Policy...', icon: '$(hubot)' },
  'rehearsal.setEndpointApiKey': { title: 'Set Endpoint API Key...', icon: '$(key)' },
  'rehearsal.setJudgeApiKey': { title: 'Set Judge API Key...', icon: '$(key)' },
  'rehearsal.markFidelityError': { title: 'Mark Fidelity Error...', icon: '$(report)' },
  'rehearsal.markPathAtCursor': {
    title: 'Mark JSON Path at Cursor as Fidelity Error...',
    icon: '$(symbol-field)',
  },
  'rehearsal.reviewMismatches': { title: 'Review Mismatches...', icon: '$(checklist)' },
  'rehearsal.reviewMark': { title: 'Review: Mark as Fidelity Error', icon: '$(report)' },
  'rehearsal.reviewAccept': { title: 'Review: Rehearsal Acceptable', icon: '$(check)' },
  'rehearsal.reviewSkip': { title: 'Review: Skip', icon: '$(arrow-right)' },
  'rehearsal.reviewStop': { title: 'Review: Stop', icon: '$(close)' },
  'rehearsal.reviewTrajectory': { title: 'Review: Open Trajectory', icon: '$(list-flat)' },
  'rehearsal.reviewActions': { title: 'Review: Actions...', icon: '$(checklist)' },
  'rehearsal.showTurnText': { title: 'Show Turn Text', icon: '$(file-text)' },
  'rehearsal.acceptRehearsal': { title: 'Mark Rehearsal Acceptable', icon: '$(check)' },
  'rehearsal.editAnnotation': { title: 'Edit Annotation...', icon: '$(edit)' },
  'rehearsal.deleteAnnotation': { title: 'Delete Annotation', icon: '$(trash)' },
  'rehearsal.openAnnotation': { title: 'Go to Annotation', icon: '$(go-to-file)' },
  'rehearsal.openTrajectory': { title: 'Open Trajectory', icon: '$(list-flat)' },
  'rehearsal.filterExplorer': { title: 'Filter Trace Explorer...', icon: '$(filter)' },
  'rehearsal.searchExplorer': { title: 'Search Trace Explorer...', icon: '$(search)' },
  'rehearsal.sortExplorer': { title: 'Sort Trace Explorer...', icon: '$(list-ordered)' },
  'rehearsal.clearExplorerFilter': { title: 'Clear Trace Explorer Filter', icon: '$(clear-all)' },
  'rehearsal.showMore': { title: 'Show More', icon: '$(more)' },
  'rehearsal.startTrainingRun': { title: 'Start Training Run...', icon: '$(rocket)' },
  'rehearsal.exportTrainingRows': { title: 'Export Training Rows...', icon: '$(export)' },
  'rehearsal.openTrainingRun': { title: 'Open Training Run...', icon: '$(graph-line)' },
  'rehearsal.cancelTrainingRun': { title: 'Cancel Training Run', icon: '$(debug-stop)' },
  'rehearsal.resumeTrainingRun': { title: 'Resume Training Run...', icon: '$(debug-continue)' },
  'rehearsal.useTrainedPolicy': { title: 'Use Trained Model as Policy...', icon: '$(hubot)' },
  'rehearsal.compareFidelity': { title: 'Compare Policy Fidelity...', icon: '$(diff-multiple)' },
  'rehearsal.setUpTrainer': { title: 'Set Up Trainer', icon: '$(tools)' },
};

/** The category under which every command appears in the palette. */
export const COMMAND_CATEGORY = 'Rehearsal';

/** View ids. */
export const VIEWS = {
  container: 'rehearsal',
  traceExplorer: 'rehearsal.traceExplorer',
  annotations: 'rehearsal.annotations',
} as const;

/** Context keys the extension sets for `when` clauses. */
export const CONTEXT_KEYS = {
  running: 'rehearsal.running',
  explorerFiltered: 'rehearsal.explorerFiltered',
  /** A training run started by this editor is running. */
  training: 'rehearsal.training',
} as const;

/** The view type of the Trajectory panel (also its serializer's). */
export const TRAJECTORY_VIEW_TYPE = 'rehearsal.trajectory';

/** The view type of the training dashboard (also its serializer's). */
export const TRAINING_DASHBOARD_VIEW_TYPE = 'rehearsal.trainingDashboard';

/** The view type of the Compare Runs panel. */
export const RUNS_VIEW_TYPE = 'rehearsal.compareRuns';

/** The view type of the run summary panel. */
export const SUMMARY_VIEW_TYPE = 'rehearsal.runSummary';

/** The view type of the fidelity comparison panel. */
export const COMPARE_VIEW_TYPE = 'rehearsal.fidelityComparison';

/** The language of call documents (canonical JSON of a rehearsal or an actual response). */
export const CALL_JSON_LANGUAGE = 'rehearsal-json';
