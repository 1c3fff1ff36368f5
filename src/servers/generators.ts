import type { TaskGenerator } from '../core/tasks/generator';
import { BANK_CHOICE_GENERATOR } from './bank/choiceGenerator';
import {
  BANK_FORESIGHT_GENERATOR,
  BANK_FORESIGHT_LOGGING_GENERATOR,
  BANK_FORESIGHT_TWIN_GENERATOR,
} from './bank/foresightGenerator';
import { BANK_GENERATOR } from './bank/generator';
import { RETAIL_GENERATOR } from './retail/generator';

/**
 * The task generators of the built-in domains, by name: a domain's own (`{ "builtin": name }`);
 * `bank-choice`, GRPO's sanity task family on the bank server; and the foresight family on the bank
 * server's foresight world: `bank-foresight`, its twin, and its logging variant (docs/task-format.md).
 */
export const BUILTIN_GENERATORS: { [name: string]: TaskGenerator } = {
  retail: RETAIL_GENERATOR,
  bank: BANK_GENERATOR,
  'bank-choice': BANK_CHOICE_GENERATOR,
  'bank-foresight': BANK_FORESIGHT_GENERATOR,
  'bank-foresight-twin': BANK_FORESIGHT_TWIN_GENERATOR,
  'bank-foresight-logging': BANK_FORESIGHT_LOGGING_GENERATOR,
};
