import type { ProgressLog } from '../shared/log';
import type { Recipe } from '../trainDefault/settings';
import type { ForesightSettings } from './settings';

/** What every step of measure:foresight reads. */
export interface ForesightContext {
  settings: ForesightSettings;
  /** The recipe whose SFT and GRPO settings the arms use (its grounded imagination off). */
  recipe: Recipe;
  log: ProgressLog;
  /** BASE's prompt (its rehearsal_config.json), which the rows are exported for. */
  prompt: { rehearsePrompt?: unknown; identifierSlots: boolean };
}
