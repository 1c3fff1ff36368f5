import { Random } from '../common/random';
import type { Account, BankState } from './world';
import { cents, createBankWorld } from './world';

/** The accounts the foresight world adds: type, id prefix, nicknames, and how often they are joint. */
const EXTRA_ACCOUNTS: readonly {
  type: Account['type'];
  prefix: string;
  nicknames: readonly string[];
  joint: number;
}[] = [
  {
    type: 'money_market',
    prefix: 'MM',
    nicknames: ['Money Market', 'Premier Money Market'],
    joint: 0.35,
  },
  { type: 'cd', prefix: 'CD', nicknames: ['12-Month CD', '24-Month CD'], joint: 0.3 },
  // An IRA is held by one person, by law.
  { type: 'ira', prefix: 'IRA', nicknames: ['Roth IRA', 'Traditional IRA'], joint: 0 },
];

/** How often the foresight world makes a customer's checking or savings account joint. */
const JOINT_BASE_ACCOUNT = 0.25;

/**
 * The foresight world of a seed: the default bank world of that seed (`createBankWorld`, unchanged),
 * then, from a random source of its own, an `ownership` (individual or joint) on every account and
 * two more accounts per customer among a money market account, a certificate of deposit and a
 * retirement account (IRA), active, funded, with ids whose letters say their type (`MM`, `CD`,
 * `IRA`, as `CHK` and `SAV` do). The transfer rule (`transferRule.ts`) refuses transfers out of CDs,
 * IRAs and joint accounts, so in this world it decides about half of the transfers a customer could
 * ask for. The default world is never touched: its tasks and every response in it stay as they were.
 */
export function createForesightWorld(seed: number): BankState {
  const s = createBankWorld(seed);
  const rng = new Random(seed * 7919 + 0xf0e5);
  const used = new Set(Object.keys(s.accounts));
  const id = (prefix: string) => {
    for (;;) {
      const v = prefix + rng.digits(8);
      if (!used.has(v)) {
        used.add(v);
        return v;
      }
    }
  };
  for (const customer of Object.values(s.customers)) {
    for (const accountId of customer.accounts)
      s.accounts[accountId].ownership = rng.chance(JOINT_BASE_ACCOUNT) ? 'joint' : 'individual';
    for (const extra of rng.sample(EXTRA_ACCOUNTS, 2)) {
      const account: Account = {
        account_id: id(extra.prefix),
        customer_id: customer.customer_id,
        type: extra.type,
        nickname: rng.pick(extra.nicknames),
        balance: cents(rng.int(2000, 60000) + rng.int(0, 99) / 100),
        status: 'active',
        daily_transfer_limit: rng.pick([2500, 5000, 10000]),
        transferred_today: 0,
        ownership: rng.chance(extra.joint) ? 'joint' : 'individual',
      };
      s.accounts[account.account_id] = account;
      customer.accounts.push(account.account_id);
    }
  }
  return s;
}
