import { resolveTrainerPython } from '../core/training/pythonEnv';

/**
 * The interpreter of the studio's Python environment for the built-in Python servers (`bfcl`):
 * `$TRAINER_PYTHON`, else the environment `rehearse trainer setup` makes; without one, the coded
 * error that names the command.
 */
export const studioPython = (): string => resolveTrainerPython().python;
