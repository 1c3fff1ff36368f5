import type { JsonObject } from '../../core/base/json';
import type { Domain } from '../common/domain';
import { createForesightWorld } from './foresightWorld';
import { BANK_TOOLS } from './tools';
import type { BankState } from './world';
import { createBankWorld } from './world';

/** The bank domain: customers, accounts, cards, payees, transactions. */
export const BANK_DOMAIN: Domain<BankState> = {
  name: 'bank',
  version: '1.0.0',
  createState: createBankWorld,
  snapshot: (s) => JSON.parse(JSON.stringify(s)) as JsonObject,
  tools: BANK_TOOLS,
};

/**
 * The bank domain on its foresight world (`--world foresight`, the `bank-foresight` task families):
 * the same tools and rules, in a world that adds CDs, IRAs and joint accounts.
 */
export const BANK_FORESIGHT_DOMAIN: Domain<BankState> = {
  ...BANK_DOMAIN,
  createState: createForesightWorld,
};

/** The bank server's worlds by the name `--world` gives (`default` when absent). */
export const BANK_WORLDS: { [name: string]: Domain<BankState> } = {
  default: BANK_DOMAIN,
  foresight: BANK_FORESIGHT_DOMAIN,
};
