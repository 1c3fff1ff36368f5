import { Random } from '../common/random';
import { distinctNames } from '../retail/world';

/** A customer of the bank. */
export interface Customer {
  customer_id: string;
  name: string;
  email: string;
  phone: string;
  accounts: string[];
  cards: string[];
  payees: string[];
}

/** A deposit account. */
export interface Account {
  account_id: string;
  customer_id: string;
  /**
   * The default world has checking and savings accounts only; the foresight world
   * (`foresightWorld.ts`) adds money market accounts, certificates of deposit and retirement accounts.
   */
  type: 'checking' | 'savings' | 'money_market' | 'cd' | 'ira';
  nickname: string;
  balance: number;
  status: 'active' | 'frozen';
  daily_transfer_limit: number;
  transferred_today: number;
  /** Held by the customer alone or jointly; set in the foresight world only, absent in the default one. */
  ownership?: 'individual' | 'joint';
}

/** A debit card on an account. */
export interface Card {
  card_id: string;
  customer_id: string;
  account_id: string;
  last_four: string;
  status: 'active' | 'frozen';
  frozen_reason?: string;
}

/** Someone the customer pays bills to. */
export interface Payee {
  payee_id: string;
  customer_id: string;
  name: string;
  category: 'utility' | 'rent' | 'phone' | 'insurance' | 'internet' | 'person';
  account_number: string;
  routing_number: string;
}

/** One line of an account's history: negative amounts leave the account. */
export interface Transaction {
  transaction_id: string;
  account_id: string;
  date: string;
  kind: 'card' | 'deposit' | 'transfer' | 'bill_payment';
  description: string;
  merchant?: string;
  card_id?: string;
  amount: number;
  dispute?: { status: 'open'; reason: string; opened: string };
}

/** The whole bank world. */
export interface BankState {
  /** The bank's current date (YYYY-MM-DD): disputes and "since" queries count from it. */
  today: string;
  customers: { [id: string]: Customer };
  accounts: { [id: string]: Account };
  cards: { [id: string]: Card };
  payees: { [id: string]: Payee };
  transactions: { [id: string]: Transaction };
  /** Counter for ids of things created during the episode. */
  next_id: number;
}

/** Card merchants and their usual spend. */
export const MERCHANTS: readonly (readonly [string, number, number])[] = [
  ['Whole Foods Market', 20, 160],
  ["Trader Joe's", 15, 90],
  ['Shell', 30, 75],
  ['Starbucks', 4, 18],
  ['Netflix', 15.49, 15.49],
  ['Spotify', 11.99, 11.99],
  ['Amazon', 10, 250],
  ['Target', 12, 180],
  ['Uber', 9, 55],
  ['CVS Pharmacy', 6, 60],
  ['Home Depot', 15, 320],
  ['Chipotle', 10, 28],
  ['Costco', 40, 300],
  ['Apple Store', 1.99, 199],
  ['Delta Air Lines', 180, 620],
  ['Lyft', 8, 45],
];

/** Bill payees a world draws from. */
export const PAYEE_NAMES: readonly (readonly [string, Payee['category']])[] = [
  ['City Power & Light', 'utility'],
  ['Metro Water Services', 'utility'],
  ['Comcast Xfinity', 'internet'],
  ['Verizon Wireless', 'phone'],
  ['State Farm Insurance', 'insurance'],
  ['Greenview Apartments', 'rent'],
  ['T-Mobile', 'phone'],
  ['Geico', 'insurance'],
];

/** Rounds to cents. */
export function cents(x: number): number {
  return Math.round(x * 100) / 100;
}

/** The date `days` after `date` (YYYY-MM-DD; negative days go back). */
export function addDays(date: string, days: number): string {
  const t =
    Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) +
    days * 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

/** Whole days from `a` to `b`. */
export function daysBetween(a: string, b: string): number {
  const ms = (d: string) =>
    Date.UTC(Number(d.slice(0, 4)), Number(d.slice(5, 7)) - 1, Number(d.slice(8, 10)));
  return Math.round((ms(b) - ms(a)) / 86_400_000);
}

/** Transactions of an account, newest first. */
export function accountHistory(s: BankState, accountId: string): Transaction[] {
  return Object.values(s.transactions)
    .filter((t) => t.account_id === accountId)
    .sort((a, b) =>
      a.date === b.date ? (a.transaction_id < b.transaction_id ? 1 : -1) : a.date < b.date ? 1 : -1,
    );
}

/**
 * The bank world of a seed: about ten customers with checking and savings accounts, debit cards,
 * payees, and four months of history (payroll, card purchases, bills).
 */
export function createBankWorld(seed: number): BankState {
  const rng = new Random(seed + 0x5eed);
  const used = new Set<string>();
  const id = (prefix: string, n: number) => {
    for (;;) {
      const v = prefix + rng.digits(n);
      if (!used.has(v)) {
        used.add(v);
        return v;
      }
    }
  };
  const today = addDays('2025-06-01', rng.int(0, 90));
  const s: BankState = {
    today,
    customers: {},
    accounts: {},
    cards: {},
    payees: {},
    transactions: {},
    next_id: 1,
  };
  const tx = (t: Omit<Transaction, 'transaction_id'>) => {
    const tid = id('T', 9);
    s.transactions[tid] = { transaction_id: tid, ...t };
    return tid;
  };
  const b: WorldBuilder = { rng, s, id, tx };
  for (const [first, last] of distinctNames(rng, rng.int(8, 12))) {
    const customer = newCustomer(b, first, last);
    const { checking, savings } = openAccounts(b, customer);
    issueCards(b, customer, checking);
    addPayees(b, customer);
    writeHistory(b, customer, checking, savings);
    s.customers[customer.customer_id] = customer;
  }
  return s;
}

/** A bank world being made: its random source, the state so far, fresh ids and new transactions. */
interface WorldBuilder {
  rng: Random;
  s: BankState;
  /** A new id: `prefix` and `n` random digits, never one given before. */
  id: (prefix: string, n: number) => string;
  /** Adds a transaction with a new id; returns the id. */
  tx: (t: Omit<Transaction, 'transaction_id'>) => string;
}

/** A customer with a name, email and phone, and no accounts yet. */
function newCustomer(b: WorldBuilder, first: string, last: string): Customer {
  const { rng, id } = b;
  return {
    customer_id: id('C', 6),
    name: `${first} ${last}`,
    email: `${first.toLowerCase()}.${last.toLowerCase()}@mailbox.test`,
    phone: `+1-555-${rng.digits(3)}-${rng.digits(4)}`,
    accounts: [],
    cards: [],
    payees: [],
  };
}

/** The customer's checking and savings accounts, some frozen, each with a daily transfer limit. */
function openAccounts(
  b: WorldBuilder,
  customer: Customer,
): { checking: Account; savings: Account } {
  const { rng, s, id } = b;
  const checking: Account = {
    account_id: id('CHK', 8),
    customer_id: customer.customer_id,
    type: 'checking',
    nickname: 'Everyday Checking',
    balance: cents(rng.int(150, 9000) + rng.int(0, 99) / 100),
    status: rng.chance(0.12) ? 'frozen' : 'active',
    daily_transfer_limit: rng.pick([1000, 2500, 5000]),
    transferred_today: 0,
  };
  const savings: Account = {
    account_id: id('SAV', 8),
    customer_id: customer.customer_id,
    type: 'savings',
    nickname: rng.pick(['Rainy Day Savings', 'High-Yield Savings', 'Vacation Fund']),
    balance: cents(rng.int(400, 40000) + rng.int(0, 99) / 100),
    status: rng.chance(0.08) ? 'frozen' : 'active',
    daily_transfer_limit: rng.pick([1000, 2500, 5000]),
    transferred_today: 0,
  };
  for (const a of [checking, savings]) {
    s.accounts[a.account_id] = a;
    customer.accounts.push(a.account_id);
  }
  return { checking, savings };
}

/** One or two debit cards on the checking account, some frozen. */
function issueCards(b: WorldBuilder, customer: Customer, checking: Account): void {
  const { rng, s, id } = b;
  for (let k = 0, n = rng.int(1, 2); k < n; k++) {
    const card: Card = {
      card_id: id('CARD', 6),
      customer_id: customer.customer_id,
      account_id: checking.account_id,
      last_four: rng.digits(4),
      status: rng.chance(0.1) ? 'frozen' : 'active',
    };
    if (card.status === 'frozen') card.frozen_reason = 'suspicious activity';
    s.cards[card.card_id] = card;
    customer.cards.push(card.card_id);
  }
}

/** One to three payees of bills. */
function addPayees(b: WorldBuilder, customer: Customer): void {
  const { rng, s, id } = b;
  for (const [name, category] of rng.sample(PAYEE_NAMES, rng.int(1, 3))) {
    const payee: Payee = {
      payee_id: id('P', 6),
      customer_id: customer.customer_id,
      name,
      category,
      account_number: rng.digits(10),
      routing_number: rng.pick(['021000021', '026009593', '111000614', '121000248']),
    };
    s.payees[payee.payee_id] = payee;
    customer.payees.push(payee.payee_id);
  }
}

/** Four months of history: payroll every two weeks, card purchases, bill payments, savings interest. */
function writeHistory(
  b: WorldBuilder,
  customer: Customer,
  checking: Account,
  savings: Account,
): void {
  const { rng, s, tx } = b;
  const today = s.today;
  const employer = rng.pick([
    'Acme Corp',
    'Northwind Traders',
    'Globex Inc',
    'Initech',
    'Umbrella Health',
  ]);
  const pay = cents(rng.int(1400, 4200) + rng.int(0, 99) / 100);
  for (let d = rng.int(1, 14); d <= 120; d += 14)
    tx({
      account_id: checking.account_id,
      date: addDays(today, -d),
      kind: 'deposit',
      description: `Payroll ${employer}`,
      amount: pay,
    });
  for (let k = 0, n = rng.int(12, 24); k < n; k++) {
    const [merchant, lo, hi] = rng.pick(MERCHANTS);
    const amount = lo === hi ? lo : cents(lo + rng.next() * (hi - lo));
    tx({
      account_id: checking.account_id,
      date: addDays(today, -rng.int(0, 120)),
      kind: 'card',
      description: `Card purchase ${merchant}`,
      merchant,
      card_id: rng.pick(customer.cards),
      amount: -amount,
    });
  }
  for (const pid of customer.payees) {
    const p = s.payees[pid];
    tx({
      account_id: checking.account_id,
      date: addDays(today, -rng.int(5, 40)),
      kind: 'bill_payment',
      description: `Bill payment ${p.name}`,
      amount: -cents(rng.int(40, 260) + rng.int(0, 99) / 100),
    });
  }
  tx({
    account_id: savings.account_id,
    date: addDays(today, -rng.int(10, 90)),
    kind: 'deposit',
    description: 'Interest payment',
    amount: cents(rng.int(1, 40) + rng.int(0, 99) / 100),
  });
}
