import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { canonicalJson } from '../../core/base/canonicalJson';
import type { JsonValue } from '../../core/base/json';
import { readJson, readJsonOr, writeJson, writeText } from './files';
import type { ProgressLog } from './log';

// Resumability: every stage of a recipe leaves a mark in its work folder when it has finished, and a
// later run skips what is marked (an interrupted training run resumes by itself from its checkpoint).

/** What to do with a stage: run it or skip it, and whether the recipe stops after it (`--until`). */
export interface StageDecision {
  run: boolean;
  stopAfter: boolean;
}

/** The decision for stage `key`: run unless its mark is there; stop after it when `until` names it. */
export function decideStage(key: string, marked: boolean, until?: string): StageDecision {
  return { run: !marked, stopAfter: until === key };
}

/** Thrown after the stage `--until` named: the recipe ends there, successfully. */
export class StoppedAfter extends Error {
  constructor(readonly stage: string) {
    super(`stopped after ${stage} (--until)`);
  }
}

/** `minutes` with `add` more added to `key`, rounded to hundredths (a resumed stage adds its parts). */
export function addMinutes(
  minutes: Record<string, number>,
  key: string,
  add: number,
): Record<string, number> {
  return { ...minutes, [key]: Number(((minutes[key] ?? 0) + add).toFixed(2)) };
}

/**
 * The stages of a recipe in its work folder: stage `key` is done when `<key>.done` is there. Each
 * stage's wall minutes add up in `stage-minutes.json` across resumed runs.
 */
export class Stages {
  constructor(
    readonly work: string,
    private readonly log: ProgressLog,
    private readonly until?: string,
  ) {}

  /** The file of each stage's wall minutes. */
  get minutesFile(): string {
    return path.join(this.work, 'stage-minutes.json');
  }

  /** Every stage's wall minutes so far. */
  minutes(): Promise<Record<string, number>> {
    return readJsonOr<Record<string, number>>(this.minutesFile, {});
  }

  /** Runs stage `key` (shown as `title`) unless it is done; throws {@link StoppedAfter} at `--until`. */
  async run(key: string, title: string, work: () => Promise<void>): Promise<void> {
    const marker = path.join(this.work, `${key}.done`);
    const decision = decideStage(key, existsSync(marker), this.until);
    if (!decision.run) this.log(`${title}: done before, skipped`);
    else {
      this.log(`${title}...`);
      const begun = Date.now();
      try {
        await work();
      } finally {
        const minutes = addMinutes(await this.minutes(), key, (Date.now() - begun) / 60000);
        await writeJson(this.minutesFile, minutes).catch(() => undefined);
      }
      await writeText(marker, new Date().toISOString() + '\n');
    }
    if (decision.stopAfter) throw new StoppedAfter(key);
  }
}

/** A cached step's name, or its name and the key its result depends on (see {@link cachedStep}). */
export type StepId = string | { name: string; key: string };

/**
 * A step that is done once: its result is kept in `<work>/<name>.json` (with its seconds) and read
 * back on later runs. With a key (what the step's result depends on: a {@link stepKey} of its
 * settings), a kept result is read back only when it was made under the same key: a step whose
 * settings changed runs again instead of silently reusing what the old settings made.
 */
export async function cachedStep<T extends object>(
  work: string,
  step: StepId,
  log: ProgressLog,
  compute: () => Promise<T>,
): Promise<T & { seconds: number }> {
  const { name, key } = typeof step === 'string' ? { name: step, key: undefined } : step;
  const file = path.join(work, `${name}.json`);
  if (existsSync(file)) {
    const kept = await readJson<T & { seconds: number; key?: string }>(file);
    if (key === undefined || kept.key === key) {
      log(`${name}: done before`);
      return kept;
    }
    log(`${name}: its settings changed since it ran; running it again`);
  } else log(`${name}...`);
  const t0 = Date.now();
  const result = {
    ...(await compute()),
    seconds: Math.round((Date.now() - t0) / 1000),
    ...(key !== undefined ? { key } : {}),
  };
  await writeJson(file, result);
  return result;
}

/**
 * A short, stable hash of what a step depends on (a JSON-able value: its canonical JSON, fields
 * that are `undefined` left out), for {@link cachedStep}.
 */
export function stepKey(value: unknown): string {
  const json = JSON.parse(JSON.stringify(value ?? null)) as JsonValue;
  return createHash('sha256').update(canonicalJson(json)).digest('hex').slice(0, 16);
}
