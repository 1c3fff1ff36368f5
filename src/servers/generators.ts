import type { TaskGenerator } from '../core/tasks/generator';
import { BANK_GENERATOR } from './bank/generator';
import { RETAIL_GENERATOR } from './retail/generator';

/** The task generators of the built-in domains, by domain name (`{ "builtin": name }`). */
export const BUILTIN_GENERATORS: { [domain: string]: TaskGenerator } = {
  retail: RETAIL_GENERATOR,
  bank: BANK_GENERATOR,
};
