import type { TrainingBackend } from './launchPlan';

/**
 * The file a launch writes into the run folder (the CLI's, the editor's and the recipes' alike): what
 * Resume and a replotted dashboard need after a restart.
 */
export const LAUNCH_RECORD = 'launch.json';

/** The launch record's fields. */
export interface LaunchRecord {
  runFile: string;
  backend: TrainingBackend;
  command: string;
}
