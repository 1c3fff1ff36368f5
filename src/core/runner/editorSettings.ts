import { requireNumber } from '../base/numbers';
import type { OutsideNumberSpec } from '../base/numbers';
import { OUTSIDE_NUMBERS } from '../base/outsideNumbers';
import type { MemoryKind, RunSettings } from './settings';
import { MEMORY_KINDS } from './settings';

/**
 * One `rehearsal.*` setting's value by its key under the section (`run.seed`); undefined when not
 * set. The editor's settings are JSON a person edits: their `minimum`s in package.json are hints the
 * editor shows, not checks.
 */
export type SettingValue = (key: string) => unknown;

/** A number setting through the one reader (SETTING_INVALID naming the setting and its range). */
function settingNumber<F extends number | undefined>(
  value: SettingValue,
  spec: OutsideNumberSpec,
  fallback: F,
): number | F {
  return requireNumber(value(spec.name.replace(/^rehearsal\./, '')), spec, fallback, {
    advice: 'Fix it in the settings.',
  });
}

/** A memory kind by its name; `condensed` (the default) for any other word. */
function memoryKind(name: string): MemoryKind {
  return MEMORY_KINDS.find((kind) => kind === name) ?? 'condensed';
}

/** How runs started from the editor play their episodes, from the settings. */
export function runDefaultsFromSettings(value: SettingValue): Partial<RunSettings> {
  const temperature = settingNumber(value, OUTSIDE_NUMBERS.settingTemperature, 0);
  const seed = settingNumber(value, OUTSIDE_NUMBERS.settingSeed, 0);
  const word = (key: string, fallback: string) => {
    const v = value(key);
    return typeof v === 'string' ? v : fallback;
  };
  return {
    episodesPerTask: settingNumber(value, OUTSIDE_NUMBERS.settingEpisodes, 1),
    sampling: { act: { temperature, seed }, rehearse: { temperature, seed } },
    onParseError: word('run.onParseError', 'end') === 'feedback' ? 'feedback' : 'end',
    reward: word('run.reward', 'studio') === 'envace' ? 'envace' : 'studio',
    parse: word('run.parse', 'studio') === 'envace' ? 'envace' : 'studio',
    privateRehearsal: {
      budget: settingNumber(value, OUTSIDE_NUMBERS.settingBudget, 3),
      order:
        word('run.privateRehearsal.order', 'sequential') === 'parallel' ? 'parallel' : 'sequential',
      memory: memoryKind(word('run.privateRehearsal.memory', 'condensed')),
    },
  };
}

/** `rehearsal.run.concurrency`: episodes in flight, or undefined for the policy kind's default. */
export function concurrencyFromSettings(value: SettingValue): number | undefined {
  return settingNumber(value, OUTSIDE_NUMBERS.settingConcurrency, undefined);
}

/** `rehearsal.policy.threads`: CPU threads of the policy host (undefined, or 0: its own choice). */
export function threadsFromSettings(value: SettingValue): number | undefined {
  return settingNumber(value, OUTSIDE_NUMBERS.settingThreads, 0) || undefined;
}
