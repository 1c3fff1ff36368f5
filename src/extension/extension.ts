import type * as vscode from 'vscode';
import { registerAnnotationFeatures } from './features/annotations/registerAnnotations';
import { registerReviewFeatures } from './features/review/registerReview';
import { registerGpuFeatures } from './features/runs/registerGpu';
import { registerJudgeFeatures } from './features/runs/registerJudge';
import { registerRunFeatures } from './features/runs/registerRuns';
import { registerOtlpReceiverFeatures } from './features/traces/registerOtlpReceiver';
import { registerTraceFeatures } from './features/traces/registerTraces';
import { registerTrainerEnvFeatures } from './features/training/registerTrainerEnv';
import { registerTrainingFeatures } from './features/training/registerTraining';
import type { Services } from './services';
import { createServices } from './services';

/** What the extension hands to other extensions and to its own editor tests. */
export interface RehearsalStudioApi {
  services: Services;
  /** Resolves once the first scan of the workspace's traces (and their annotations) is done. */
  ready: Promise<void>;
}

/** Builds the services, then registers each feature. */
export function activate(context: vscode.ExtensionContext): RehearsalStudioApi {
  const services = createServices(context);

  registerTraceFeatures(context, services);
  registerOtlpReceiverFeatures(context, services);
  registerAnnotationFeatures(context, services);
  registerReviewFeatures(context, services);
  registerRunFeatures(context, services);
  registerJudgeFeatures(context);
  registerGpuFeatures(context, services);
  registerTrainingFeatures(context, services);
  registerTrainerEnvFeatures(context, services);

  const { watcher, library, annotations, output } = services;
  const ready = watcher
    .rescan()
    .then(() => Promise.all(library.files.map((f) => annotations.ensure(f).catch(() => undefined))))
    .then(() => output.info(`Indexed ${library.files.length} trace(s).`));
  return { services, ready };
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
