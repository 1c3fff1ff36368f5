import type { ParseDialect } from '../protocol/dialect';
import type { RehearsePromptOptions } from '../protocol/rehearsePrompt';
import type { SamplingSettings } from '../policy/sampling/sampling';
import type { RewardRule } from '../tasks/checks/envaceReward';
import type { RunMode } from '../trace/format/schema';

/** What private rehearsal's committed episode reads of the imagined attempts ({@link RunSettings}). */
export const MEMORY_KINDS = ['condensed', 'attempts', 'outcomes'] as const;
/** One of {@link MEMORY_KINDS}. */
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/** How a run plays its episodes. Recorded in the trace's `run.settings`. */
export interface RunSettings {
  mode: RunMode;
  /** Imagine mode: also run the real tool beside each rehearsal, for comparison only. */
  audit: boolean;
  /** Episodes per task. */
  episodesPerTask: number;
  sampling: { act: Partial<SamplingSettings>; rehearse: Partial<SamplingSettings> };
  maxTokens: { act: number; rehearse: number };
  /** Which sections the rehearse prompt carries. */
  rehearsePrompt: RehearsePromptOptions;
  /** Rehearsal samples per call (batched); the first is the one the episode uses. */
  rehearsalSamples: number;
  /**
   * Imagined episodes (imagine mode, private rehearsal's attempts): how many times a rehearsal that
   * does not parse is sampled again before it ends the episode (each try with a seed of its own; none
   * when the rehearse role samples greedily, which would give the same text). The rejected samples are
   * recorded with the call's rehearsal. Default 3 under the `studio` reward rule, 0 under `envace`
   * (EnvACE's simulator takes one sample). Shadow mode never resamples: its rehearsals are measured.
   */
  rehearsalRetries: number;
  /**
   * What a parse error does: `end` the episode (EnvACE's rule), or `feedback`: tell the policy
   * what was wrong, as a tool message, and let it try again within the turn limit.
   */
  onParseError: 'end' | 'feedback';
  /**
   * How episodes are rewarded: `studio`, the weighted share of passed checks (docs/task-format.md), or
   * `envace`, EnvACE's rule: per user turn, an early end on an unmet `required_for_next_turn` item,
   * and any `error_tool_call` (a parse error, a failed tool or rehearsal) ends the episode. Traces
   * written before this setting existed used `studio`.
   */
  reward: RewardRule;
  /**
   * How the policy's text is parsed: `studio` (the default: standard JSON, ASCII whitespace, every
   * value survives a JSON trace and the Python trainer mirrors it), or `envace`: as EnvACE's Python
   * parses it (NaN/Infinity valid and stored as `{"$numberDouble": ...}`, Unicode whitespace
   * stripped), with EnvACE's codes for the tool errors it shares with the studio.
   */
  parse: ParseDialect;
  /**
   * Private rehearsal: imagined episodes before the committed one, and how they see each other.
   * `temperature`, when set, samples the imagined episodes (acts and rehearsals) at it, each with a
   * seed of its own (derived from the run's seed and its number), so that attempts differ while the committed
   * episode keeps the run's sampling; unset, they use the run's sampling (greedy ones are identical).
   */
  privateRehearsal: {
    budget: number;
    order: 'parallel' | 'sequential';
    temperature?: number;
    /**
     * What the committed episode reads: `condensed` (the default, EnvACE's way: the policy writes a
     * memory of its attempts), `attempts` (the attempts themselves, bounded as a sequential attempt
     * reads them: for a small policy that was never taught to condense), or `outcomes` (one line per
     * imagined write: the tool and `ok`, `refused` with the rehearsal's reason, or `unknown`; no
     * identifier and no argument, so it renumbers none of the real conversation's identifier slots,
     * which `condensed` and `attempts` may: runner/outcomesMemory.ts).
     */
    memory?: MemoryKind;
  };
}

/** The defaults: shadow mode, greedy acting, one rehearsal per call. */
export const DEFAULT_RUN_SETTINGS: RunSettings = {
  mode: 'shadow',
  audit: false,
  episodesPerTask: 1,
  sampling: { act: { temperature: 0 }, rehearse: { temperature: 0 } },
  maxTokens: { act: 384, rehearse: 384 },
  rehearsePrompt: {},
  rehearsalSamples: 1,
  rehearsalRetries: 3,
  onParseError: 'end',
  reward: 'studio',
  parse: 'studio',
  privateRehearsal: { budget: 3, order: 'sequential' },
};

/** Settings with defaults filled in. */
export function withDefaults(settings: Partial<RunSettings>): RunSettings {
  return {
    ...DEFAULT_RUN_SETTINGS,
    ...settings,
    rehearsalRetries:
      settings.rehearsalRetries ??
      (settings.reward === 'envace' ? 0 : DEFAULT_RUN_SETTINGS.rehearsalRetries),
    sampling: { ...DEFAULT_RUN_SETTINGS.sampling, ...settings.sampling },
    maxTokens: { ...DEFAULT_RUN_SETTINGS.maxTokens, ...settings.maxTokens },
    privateRehearsal: { ...DEFAULT_RUN_SETTINGS.privateRehearsal, ...settings.privateRehearsal },
  };
}
