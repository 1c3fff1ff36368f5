import type { JsonObject } from '../../core/base/json';
import type { Domain } from '../common/domain';
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
