import * as path from 'node:path';
import type { TrainerEvent } from '../../core/training/launch/supervisor';
import type { ProgressLog } from '../shared/log';
import type { Stages } from '../shared/stages';
import { describeTrainerEvent } from '../shared/trainerEvents';
import type { Recipe, TrainDefaultSettings } from './settings';

/** Every folder and file of a train:default work folder. */
export interface TrainPaths {
  tasks: {
    demo: string;
    grpo: string;
    /** The GRPO tasks with their reference's real responses as examples (grounded imagination). */
    grpoGrounded: string;
    test: string;
    probe: string;
    validation: string;
  };
  demoRuns: string;
  rows: string;
  probeRows: string;
  tokenizer: string;
  init: string;
  sft: string;
  memorySft: string;
  grpo: string;
}

/** The paths of a work folder (the stages' outputs, which mark what is done besides `<stage>.done`). */
export function trainPaths(work: string): TrainPaths {
  const at = (...parts: string[]) => path.join(work, ...parts);
  return {
    tasks: {
      demo: at('tasks/demonstrations'),
      grpo: at('tasks/grpo'),
      grpoGrounded: at('tasks/grpo-grounded'),
      test: at('tasks/test'),
      probe: at('tasks/probe'),
      validation: at('tasks/validation'),
    },
    demoRuns: at('runs/demonstrations'),
    rows: at('rows/demonstrations.jsonl'),
    probeRows: at('rows/probe.jsonl'),
    tokenizer: at('tokenizer'),
    init: at('init'),
    sft: at('sft'),
    memorySft: at('sft-memory'),
    grpo: at('grpo'),
  };
}

/** What every stage of train:default reads. */
export interface TrainContext {
  settings: TrainDefaultSettings;
  recipe: Recipe;
  paths: TrainPaths;
  log: ProgressLog;
  stages: Stages;
}

/** Trainer configs and run files name paths relative to WORK (the trainer resolves them there). */
export function relativeToWork(ctx: TrainContext, p: string): string {
  return path.relative(ctx.settings.work, p);
}

/** `--identifier-slots` when the recipe's model reads identifiers as slots. */
export function slotArgs(recipe: Recipe): string[] {
  return recipe.identifierSlots ? ['--identifier-slots'] : [];
}

/** How the policy is prompted; it travels with the tokenizer through init, SFT and GRPO. */
export function policySettings(recipe: Recipe): Record<string, unknown> {
  return {
    rehearsePrompt: recipe.rehearsePrompt,
    maxTokens: recipe.maxTokens,
    ...(recipe.identifierSlots ? { identifierSlots: true } : {}),
  };
}

/** A trainer event as a progress line of this recipe. */
export function eventLogger(ctx: TrainContext): (e: TrainerEvent) => void {
  return (e) => {
    const line = describeTrainerEvent(e);
    if (line !== undefined) ctx.log(line);
  };
}
