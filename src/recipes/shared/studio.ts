import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { studioRoot } from '../../core/base/studioRoot';
import { resolveTrainerPython } from '../../core/training/pythonEnv';
import { runProgram } from './process';

/** The studio's folder (the clone the recipes run in). */
export const ROOT = studioRoot();
/** The `rehearse` CLI's bundle, which every recipe drives as a user would. */
export const CLI = path.join(ROOT, 'dist/cli.js');
/** This bundle: the recipes (the GRPO validation command runs `validate-policy` from it). */
export const RECIPES = path.join(ROOT, 'dist/recipes.js');

/** Whether VERBOSE is set: the programs' stderr is shown as it comes. */
export const verbose = (): boolean => Boolean(process.env.VERBOSE);

/** The trainer's Python: $PYTHON, else as every training launch picks it (`$TRAINER_PYTHON`, .venv). */
export function trainerPython(): string {
  return process.env.PYTHON ?? resolveTrainerPython().python;
}

/** Fails with the command to run when the CLI bundle is not built. */
export function requireCli(): void {
  if (!existsSync(CLI))
    throw new Error(`${path.relative(ROOT, CLI)} is missing: run \`npm run build\` first.`);
}

/** Runs `rehearse <args>`; resolves with its stdout. */
export function rehearse(...args: string[]): Promise<string> {
  return runProgram(process.execPath, [CLI, ...args], { cwd: ROOT, verbose: verbose() });
}

/** A path as a person reads it: relative to the studio when inside it. */
export function shown(p: string): string {
  return p.startsWith(ROOT + path.sep) ? path.relative(ROOT, p) : p;
}
