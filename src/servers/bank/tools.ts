import { z } from 'zod';
import type { JsonObject, JsonValue } from '../../core/base/json';
import type { DomainTool } from '../common/domain';
import { PolicyError } from '../common/domain';
import { RESTRICTION_REASONS, TRANSFER_RESTRICTED, transferRestriction } from './transferRule';
import type { Account, BankState, Customer, Payee } from './world';
import { accountHistory, cents, daysBetween } from './world';

type Tool = DomainTool<BankState>;

/** How far back a card purchase can be disputed, in days. */
export const DISPUTE_WINDOW_DAYS = 60;

/** A deep JSON copy of domain state, typed as the JSON it becomes (objects by default). */
const json = <T extends JsonValue = JsonObject>(v: unknown): T =>
  JSON.parse(JSON.stringify(v)) as T;
const amountSchema = z.number().positive().describe('Amount in dollars, e.g. 125.50');
const date = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .describe('A date, YYYY-MM-DD');

function customer(s: BankState, id: unknown): Customer {
  const c = s.customers[String(id)];
  if (!c) throw new PolicyError('CUSTOMER_NOT_FOUND', `Customer not found: ${String(id)}`);
  return c;
}

function account(s: BankState, id: unknown): Account {
  const a = s.accounts[String(id)];
  if (!a) throw new PolicyError('ACCOUNT_NOT_FOUND', `Account not found: ${String(id)}`);
  return a;
}

function checkAmount(amount: number): number {
  if (Math.abs(amount * 100 - Math.round(amount * 100)) > 1e-6)
    throw new PolicyError('INVALID_AMOUNT', `Amounts have at most two decimals; got ${amount}.`);
  return cents(amount);
}

function debit(a: Account, amount: number, what: string): void {
  if (a.status === 'frozen')
    throw new PolicyError(
      'ACCOUNT_FROZEN',
      `Account ${a.account_id} is frozen; no money can leave it until the freeze is lifted at a branch.`,
    );
  if (amount > a.balance)
    throw new PolicyError(
      'INSUFFICIENT_FUNDS',
      `Insufficient funds: ${what} of ${amount.toFixed(2)} exceeds the balance of ${a.balance.toFixed(2)} in ${a.account_id}.`,
    );
}

function newTransactionId(s: BankState): string {
  return `T9${String(s.next_id++).padStart(8, '0')}`;
}

function accountView(s: BankState, a: Account): JsonObject {
  return {
    ...json(a),
    remaining_transfer_limit_today: cents(a.daily_transfer_limit - a.transferred_today),
    today: s.today,
  };
}

/** The bank domain's tools. */
export const BANK_TOOLS: Tool[] = [
  {
    name: 'find_customer_by_email',
    description: 'Find a customer id by email address.',
    input: { email: z.string() },
    run: (s, a) => {
      const email = String(a['email']).trim().toLowerCase();
      const c = Object.values(s.customers).find((x) => x.email === email);
      if (!c) throw new PolicyError('CUSTOMER_NOT_FOUND', `No customer with email ${email}.`);
      return { customer_id: c.customer_id };
    },
  },
  {
    name: 'find_customer_by_phone',
    description: 'Find a customer id by phone number (+1-555-123-4567).',
    input: { phone: z.string() },
    run: (s, a) => {
      const digits = String(a['phone']).replace(/\D/g, '');
      const c = Object.values(s.customers).find(
        (x) =>
          x.phone.replace(/\D/g, '') === digits || x.phone.replace(/\D/g, '').slice(1) === digits,
      );
      if (!c)
        throw new PolicyError(
          'CUSTOMER_NOT_FOUND',
          `No customer with phone ${String(a['phone'])}.`,
        );
      return { customer_id: c.customer_id };
    },
  },
  {
    name: 'get_customer',
    description:
      "Get a customer's profile with their accounts (id, type, nickname), card ids and payee ids.",
    input: { customer_id: z.string() },
    run: (s, a) => {
      const c = customer(s, a['customer_id']);
      return {
        ...json(c),
        accounts: c.accounts.map((id) => ({
          account_id: id,
          type: s.accounts[id].type,
          nickname: s.accounts[id].nickname,
          // Only the foresight world sets it: the default world's profiles stay as they were.
          ...(s.accounts[id].ownership ? { ownership: s.accounts[id].ownership } : {}),
        })),
      };
    },
  },
  {
    name: 'get_account',
    description:
      'Get an account: balance, status (active or frozen), daily transfer limit and what remains of it today.',
    input: { account_id: z.string() },
    run: (s, a) => accountView(s, account(s, a['account_id'])),
  },
  {
    name: 'list_transactions',
    description:
      "List an account's transactions, newest first, optionally filtered by merchant (part of the name) and date range.",
    input: {
      account_id: z.string(),
      merchant: z.string().optional(),
      since: date.optional(),
      until: date.optional(),
      limit: z.number().int().min(1).max(100).optional().describe('At most this many (default 50)'),
    },
    run: (s, a) => {
      const acc = account(s, a['account_id']);
      const merchant = typeof a['merchant'] === 'string' ? a['merchant'].toLowerCase() : undefined;
      const rows = accountHistory(s, acc.account_id).filter(
        (t) =>
          (!merchant || (t.merchant ?? '').toLowerCase().includes(merchant)) &&
          (a['since'] === undefined || t.date >= String(a['since'])) &&
          (a['until'] === undefined || t.date <= String(a['until'])),
      );
      const limit = typeof a['limit'] === 'number' ? a['limit'] : 50;
      return {
        account_id: acc.account_id,
        today: s.today,
        total_matching: rows.length,
        transactions: json<JsonObject[]>(rows.slice(0, limit)),
      };
    },
  },
  {
    name: 'transfer_between_accounts',
    description:
      'Move money between two accounts of the same customer. The source must be active, hold the amount, and stay within its daily transfer limit.',
    input: {
      from_account_id: z.string(),
      to_account_id: z.string(),
      amount: amountSchema,
      memo: z.string().optional(),
    },
    target: (a) => String(a['from_account_id']),
    run: (s, a) => {
      const from = account(s, a['from_account_id']);
      const to = account(s, a['to_account_id']);
      if (from.account_id === to.account_id)
        throw new PolicyError('SAME_ACCOUNT', 'The source and destination are the same account.');
      if (from.customer_id !== to.customer_id)
        throw new PolicyError(
          'NOT_OWN_ACCOUNT',
          'Transfers are only possible between accounts of the same customer; use a bill payment for others.',
        );
      const restriction = transferRestriction(from);
      if (restriction)
        throw new PolicyError(
          TRANSFER_RESTRICTED,
          `Account ${from.account_id} ${RESTRICTION_REASONS[restriction]}.`,
        );
      const amount = checkAmount(Number(a['amount']));
      debit(from, amount, 'the transfer');
      if (to.status === 'frozen')
        throw new PolicyError(
          'ACCOUNT_FROZEN',
          `Account ${to.account_id} is frozen and cannot receive transfers.`,
        );
      if (from.transferred_today + amount > from.daily_transfer_limit) {
        throw new PolicyError(
          'DAILY_LIMIT_EXCEEDED',
          `The transfer exceeds the daily transfer limit of ${from.daily_transfer_limit.toFixed(2)} (${cents(from.daily_transfer_limit - from.transferred_today).toFixed(2)} left today).`,
        );
      }
      from.balance = cents(from.balance - amount);
      to.balance = cents(to.balance + amount);
      from.transferred_today = cents(from.transferred_today + amount);
      const memo = typeof a['memo'] === 'string' && a['memo'] ? ` (${a['memo']})` : '';
      const outId = newTransactionId(s);
      s.transactions[outId] = {
        transaction_id: outId,
        account_id: from.account_id,
        date: s.today,
        kind: 'transfer',
        description: `Transfer to ${to.account_id}${memo}`,
        amount: -amount,
      };
      const inId = newTransactionId(s);
      s.transactions[inId] = {
        transaction_id: inId,
        account_id: to.account_id,
        date: s.today,
        kind: 'transfer',
        description: `Transfer from ${from.account_id}${memo}`,
        amount,
      };
      return {
        status: 'completed',
        transaction_id: outId,
        amount,
        from: accountView(s, from),
        to: accountView(s, to),
      };
    },
  },
  {
    name: 'list_payees',
    description: 'List the payees a customer can pay bills to.',
    input: { customer_id: z.string() },
    run: (s, a) => ({
      payees: json<JsonObject[]>(customer(s, a['customer_id']).payees.map((id) => s.payees[id])),
    }),
  },
  {
    name: 'add_payee',
    description: 'Add a payee for a customer (a person or a company to pay bills to).',
    input: {
      customer_id: z.string(),
      name: z.string().min(1),
      account_number: z
        .string()
        .regex(/^\d{6,17}$/)
        .describe("The payee's account number, digits only"),
      routing_number: z
        .string()
        .regex(/^\d{9}$/)
        .describe('Nine-digit routing number'),
      category: z.enum(['utility', 'rent', 'phone', 'insurance', 'internet', 'person']).optional(),
    },
    target: (a) => String(a['customer_id']),
    run: (s, a) => {
      const c = customer(s, a['customer_id']);
      const name = String(a['name']).trim();
      if (c.payees.some((id) => s.payees[id].name.toLowerCase() === name.toLowerCase()))
        throw new PolicyError('PAYEE_EXISTS', `${name} is already a payee of this customer.`);
      const payeeId = `P9${String(s.next_id++).padStart(5, '0')}`;
      s.payees[payeeId] = {
        payee_id: payeeId,
        customer_id: c.customer_id,
        name,
        category: (a['category'] as Payee['category'] | undefined) ?? 'person',
        account_number: String(a['account_number']),
        routing_number: String(a['routing_number']),
      };
      c.payees.push(payeeId);
      return json(s.payees[payeeId]);
    },
  },
  {
    name: 'pay_bill',
    description:
      'Pay a payee of the customer from one of their accounts. The account must be active and hold the amount.',
    input: { account_id: z.string(), payee_id: z.string(), amount: amountSchema },
    target: (a) => String(a['account_id']),
    run: (s, a) => {
      const acc = account(s, a['account_id']);
      const payee = s.payees[String(a['payee_id'])];
      if (!payee || payee.customer_id !== acc.customer_id)
        throw new PolicyError(
          'PAYEE_NOT_FOUND',
          `Payee ${String(a['payee_id'])} is not a payee of the account's owner.`,
        );
      const amount = checkAmount(Number(a['amount']));
      debit(acc, amount, 'the payment');
      acc.balance = cents(acc.balance - amount);
      const tid = newTransactionId(s);
      s.transactions[tid] = {
        transaction_id: tid,
        account_id: acc.account_id,
        date: s.today,
        kind: 'bill_payment',
        description: `Bill payment ${payee.name}`,
        amount: -amount,
      };
      return {
        status: 'completed',
        transaction_id: tid,
        amount,
        payee: payee.name,
        balance: acc.balance,
      };
    },
  },
  {
    name: 'get_card',
    description:
      'Get a card: last four digits, the account it draws on, and its status (active or frozen).',
    input: { card_id: z.string() },
    run: (s, a) => {
      const c = s.cards[String(a['card_id'])];
      if (!c) throw new PolicyError('CARD_NOT_FOUND', `Card not found: ${String(a['card_id'])}`);
      return json(c);
    },
  },
  {
    name: 'freeze_card',
    description:
      'Freeze an active card so that no new purchase goes through (lost or stolen card, suspicious activity).',
    input: { card_id: z.string(), reason: z.enum(['lost', 'stolen', 'suspicious activity']) },
    target: (a) => String(a['card_id']),
    run: (s, a) => {
      const c = s.cards[String(a['card_id'])];
      if (!c) throw new PolicyError('CARD_NOT_FOUND', `Card not found: ${String(a['card_id'])}`);
      if (c.status !== 'active')
        throw new PolicyError('CARD_NOT_ACTIVE', `Card ${c.card_id} is already ${c.status}.`);
      c.status = 'frozen';
      c.frozen_reason = String(a['reason']);
      return json(c);
    },
  },
  {
    name: 'dispute_transaction',
    description: `Open a dispute on a card purchase made in the last ${DISPUTE_WINDOW_DAYS} days.`,
    input: {
      transaction_id: z.string(),
      reason: z.enum(['unauthorized', 'duplicate charge', 'item not received', 'incorrect amount']),
    },
    target: (a) => String(a['transaction_id']),
    run: (s, a) => {
      const t = s.transactions[String(a['transaction_id'])];
      if (!t)
        throw new PolicyError(
          'TRANSACTION_NOT_FOUND',
          `Transaction not found: ${String(a['transaction_id'])}`,
        );
      if (t.kind !== 'card')
        throw new PolicyError(
          'NOT_DISPUTABLE',
          `Only card purchases can be disputed; ${t.transaction_id} is a ${t.kind.replace('_', ' ')}.`,
        );
      if (t.dispute)
        throw new PolicyError(
          'ALREADY_DISPUTED',
          `Transaction ${t.transaction_id} is already disputed.`,
        );
      const age = daysBetween(t.date, s.today);
      if (age > DISPUTE_WINDOW_DAYS)
        throw new PolicyError(
          'DISPUTE_WINDOW_CLOSED',
          `Transaction ${t.transaction_id} is ${age} days old; purchases can only be disputed within ${DISPUTE_WINDOW_DAYS} days.`,
        );
      t.dispute = { status: 'open', reason: String(a['reason']), opened: s.today };
      return json(t);
    },
  },
];
