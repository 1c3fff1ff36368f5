import type { TaskGenerator } from '../core/tasks/generator';
import { BANK_CHOICE_GENERATOR } from './bank/choiceGenerator';
import { BANK_GENERATOR } from './bank/generator';
import { RETAIL_GENERATOR } from './retail/generator';

/**
 * The task generators of the built-in domains, by name: a domain's own (`{ "builtin": name }`), and
 * `bank-choice`, GRPO's sanity task family on the bank server.
 */
export const BUILTIN_GENERATORS: { [name: string]: TaskGenerator } = {
  retail: RETAIL_GENERATOR,
  bank: BANK_GENERATOR,
  'bank-choice': BANK_CHOICE_GENERATOR,
};
