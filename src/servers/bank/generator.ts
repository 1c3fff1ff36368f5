import type { JsonObject } from '../../core/base/json';
import type { ParsedToolCall } from '../../core/protocol/actParser';
import type { TaskGenerator } from '../../core/tasks/generator';
import type { CheckSpec } from '../../core/tasks/format/taskFile';
import { FIRST_NAMES, LAST_NAMES } from '../common/people';
import type { Random } from '../common/random';
import type { TaskDraft as Draft } from '../common/templates';
import { templatedGenerator } from '../common/templates';
import type { WriteToolSpec } from '../common/trajectoryItems';
import { BANK_POLICY } from './policy';
import { BANK_TOOLS, DISPUTE_WINDOW_DAYS } from './tools';
import type { Account, BankState, Customer, Transaction } from './world';
import { accountHistory, addDays, cents, daysBetween } from './world';
import { createBankWorld } from './world';

interface Ctx {
  world: BankState;
  rng: Random;
}

const call = (name: string, args: JsonObject): ParsedToolCall => ({ name, arguments: args });
const money = (n: number) => `$${n.toFixed(2)}`;
const balancePath = (id: string) => `$.accounts[${JSON.stringify(id)}].balance`;
/** The bank's write log equals `list`: exactly the requested writes (`change` names them), or none. */
export const writes = (
  list: { tool: string; target: string }[],
  weight = 1,
  change = 'change',
): CheckSpec => ({
  id: 'writes',
  kind: 'state',
  server: 'bank',
  path: '$.writes',
  equals: list,
  weight,
  description: list.length ? `exactly the requested ${change} was made` : 'nothing was changed',
});
const unchanged = (a: Account, id = 'balance-unchanged'): CheckSpec => ({
  id,
  kind: 'state',
  server: 'bank',
  path: balancePath(a.account_id),
  equals: a.balance,
  weight: 2,
});

function customers(w: BankState): Customer[] {
  return Object.values(w.customers);
}

function accountOf(w: BankState, c: Customer, type: Account['type']): Account {
  return w.accounts[c.accounts.find((id) => w.accounts[id].type === type)!];
}

function identify(c: Ctx, cu: Customer): { phrase: string; call: ParsedToolCall } {
  if (c.rng.chance(0.6))
    return {
      phrase: c.rng.pick([`My email is ${cu.email}.`, `This is ${cu.name}, ${cu.email}.`]),
      call: call('find_customer_by_email', { email: cu.email }),
    };
  return {
    phrase: c.rng.pick([`My phone number is ${cu.phone}.`, `I'm ${cu.name}, phone ${cu.phone}.`]),
    call: call('find_customer_by_phone', { phone: cu.phone }),
  };
}

/** A round amount in [lo, hi] (multiples of 5, sometimes with cents); undefined when the range is empty. */
function amountIn(c: Ctx, lo: number, hi: number): number | undefined {
  const a = Math.ceil(lo / 5) * 5;
  const b = Math.floor(hi / 5) * 5;
  if (b < a) return undefined;
  const base = a + 5 * c.rng.int(0, (b - a) / 5);
  const withCents =
    c.rng.chance(0.3) && base + 0.99 <= hi ? cents(base + c.rng.int(1, 99) / 100) : base;
  return withCents;
}

function otherType(t: Account['type']): Account['type'] {
  return t === 'checking' ? 'savings' : 'checking';
}

type TransferKind = 'ok' | 'insufficient' | 'frozen' | 'limit';

/** A transfer between a customer's own accounts, of an amount for this kind of task. */
interface TransferCase {
  cu: Customer;
  from: Account;
  to: Account;
  amount: number;
}

/** A transfer between a customer's own accounts: made (`ok`), or refused for the reason `kind` names. */
function transferTask(c: Ctx, kind: TransferKind): Draft | undefined {
  const pairs = transferCases(c, kind);
  if (!pairs.length) return undefined;
  const t = c.rng.pick(pairs);
  const { cu, from, to, amount } = t;
  const who = identify(c, cu);
  const ask = `${c.rng.pick(['Please move', 'Can you transfer', "I'd like to transfer"])} ${money(amount)} from my ${from.type} account to my ${to.type} account.`;
  const user = `${ask} ${who.phrase}`;
  // Every transfer, made or refused, reads the source account first: its status, balance and daily
  // limit decide the verdict, and `get_customer` shows none of them. A reference that read it only
  // when the answer is a refusal would show the policy an expert who knows the verdict in advance.
  const lookups = [
    who.call,
    call('get_customer', { customer_id: cu.customer_id }),
    call('get_account', { account_id: from.account_id }),
  ];
  return kind === 'ok'
    ? completedTransfer(t, user, lookups)
    : refusedTransfer(t, kind, user, lookups);
}

/** Every transfer between a customer's two accounts that makes a task of this kind, with its amount. */
function transferCases(c: Ctx, kind: TransferKind): TransferCase[] {
  const pairs: TransferCase[] = [];
  for (const cu of customers(c.world)) {
    for (const type of ['checking', 'savings'] as const) {
      const from = accountOf(c.world, cu, type);
      const to = accountOf(c.world, cu, otherType(type));
      if (to.status !== 'active') continue;
      const limit = from.daily_transfer_limit - from.transferred_today;
      let amount: number | undefined;
      if (kind === 'ok' && from.status === 'active')
        amount = amountIn(c, 20, Math.min(from.balance, limit, 3000));
      if (kind === 'insufficient' && from.status === 'active' && from.balance + 10 < limit)
        amount = amountIn(c, from.balance + 10, Math.min(limit, from.balance + 800));
      if (kind === 'frozen' && from.status === 'frozen')
        amount = amountIn(c, 20, Math.min(from.balance, limit, 1500));
      if (kind === 'limit' && from.status === 'active' && from.balance > limit + 10)
        amount = amountIn(c, limit + 5, Math.min(from.balance, limit + 2000));
      if (amount !== undefined) pairs.push({ cu, from, to, amount });
    }
  }
  return pairs;
}

/** The transfer is made: both balances move, and the answer names the amount. */
function completedTransfer(t: TransferCase, user: string, lookups: ParsedToolCall[]): Draft {
  const { from, to, amount } = t;
  const args = { from_account_id: from.account_id, to_account_id: to.account_id, amount };
  return {
    template: 'transfer',
    description: `Transfer ${amount} from ${from.account_id} to ${to.account_id}.`,
    steps: [
      {
        user,
        calls: [...lookups, call('transfer_between_accounts', args)],
        answer: `Done: ${money(amount)} moved from your ${from.type} account to your ${to.type} account. Your ${from.type} balance is now ${money(cents(from.balance - amount))}.`,
      },
    ],
    checks: [
      {
        id: 'from-balance',
        kind: 'state',
        server: 'bank',
        path: balancePath(from.account_id),
        equals: cents(from.balance - amount),
        weight: 2,
      },
      {
        id: 'to-balance',
        kind: 'state',
        server: 'bank',
        path: balancePath(to.account_id),
        equals: cents(to.balance + amount),
        weight: 2,
      },
      writes([{ tool: 'transfer_between_accounts', target: from.account_id }]),
      { id: 'answer-amount', kind: 'answer', numbers: [amount], weight: 1 },
    ],
  };
}

/** The transfer is refused (insufficient funds, a frozen account, the daily limit): nothing changes. */
function refusedTransfer(
  t: TransferCase,
  kind: Exclude<TransferKind, 'ok'>,
  user: string,
  lookups: ParsedToolCall[],
): Draft {
  const { from, amount } = t;
  const answers = {
    insufficient: `Your ${from.type} account holds ${money(from.balance)}, which is not enough for a transfer of ${money(amount)}, so I cannot make it.`,
    frozen: `Your ${from.type} account is frozen, so no money can be moved out of it. Please visit a branch to lift the freeze.`,
    limit: `A transfer of ${money(amount)} would exceed the daily transfer limit of ${money(from.daily_transfer_limit)} on your ${from.type} account, so I cannot make it today.`,
  } as const;
  const keywords = {
    insufficient: ['not enough', 'insufficient', "doesn't have enough", 'does not have enough'],
    frozen: ['frozen'],
    limit: ['limit'],
  } as const;
  return {
    template: `transfer_${kind}`,
    description: `Refuse a transfer of ${amount} from ${from.account_id} (${kind}).`,
    refusal: true,
    steps: [{ user, calls: lookups, answer: answers[kind] }],
    checks: [
      unchanged(from, 'from-unchanged'),
      writes([], 2),
      {
        id: 'answer-reason',
        kind: 'answer',
        contains: [...keywords[kind]],
        mode: 'any',
        weight: 1,
      },
    ],
  };
}

/** Card purchases of a customer whose merchant and date identify them uniquely. */
function uniquePurchases(w: BankState, cu: Customer): Transaction[] {
  const chk = accountOf(w, cu, 'checking');
  const card = accountHistory(w, chk.account_id).filter((t) => t.kind === 'card');
  return card.filter(
    (t) => card.filter((u) => u.merchant === t.merchant && u.date === t.date).length === 1,
  );
}

const TEMPLATES: [string, number, (c: Ctx) => Draft | undefined][] = [
  [
    'balance',
    10,
    (c) => {
      const cu = c.rng.pick(customers(c.world));
      const type = c.rng.pick(['checking', 'savings'] as const);
      const acc = accountOf(c.world, cu, type);
      const who = identify(c, cu);
      return {
        template: 'balance',
        description: `Report the balance of ${acc.account_id}.`,
        steps: [
          {
            user: `${c.rng.pick(["What's the balance of my", 'How much money is in my', 'Can you check the balance on my'])} ${type} account? ${who.phrase}`,
            calls: [
              who.call,
              call('get_customer', { customer_id: cu.customer_id }),
              call('get_account', { account_id: acc.account_id }),
            ],
            answer: `Your ${type} account (${acc.account_id}) has a balance of ${money(acc.balance)}.`,
          },
        ],
        checks: [
          { id: 'answer-balance', kind: 'answer', numbers: [acc.balance], weight: 2 },
          {
            id: 'account-read',
            kind: 'call',
            tool: 'get_account',
            args: { account_id: { equals: acc.account_id } },
            weight: 1,
          },
          writes([]),
        ],
      };
    },
  ],
  [
    'merchant_spend',
    10,
    (c) => {
      const options: {
        cu: Customer;
        merchant: string;
        since: string;
        total: number;
        count: number;
      }[] = [];
      const days = c.rng.pick([30, 60, 90]);
      const since = addDays(c.world.today, -days);
      for (const cu of customers(c.world)) {
        const chk = accountOf(c.world, cu, 'checking');
        const rows = accountHistory(c.world, chk.account_id).filter(
          (t) => t.kind === 'card' && t.date >= since,
        );
        const merchants = new Set(rows.map((t) => t.merchant!));
        for (const m of merchants) {
          const mine = rows.filter((t) => t.merchant === m);
          if (mine.length >= 2)
            options.push({
              cu,
              merchant: m,
              since,
              total: cents(-mine.reduce((s, t) => s + t.amount, 0)),
              count: mine.length,
            });
        }
      }
      if (!options.length) return undefined;
      const o = c.rng.pick(options);
      const who = identify(c, o.cu);
      const chk = accountOf(c.world, o.cu, 'checking');
      return {
        template: 'merchant_spend',
        description: `Sum the card purchases of ${o.cu.customer_id} at ${o.merchant} since ${o.since}.`,
        steps: [
          {
            user: `${who.phrase} How much have I spent at ${o.merchant} since ${o.since}?`,
            calls: [
              who.call,
              call('get_customer', { customer_id: o.cu.customer_id }),
              call('list_transactions', {
                account_id: chk.account_id,
                merchant: o.merchant,
                since: o.since,
              }),
            ],
            answer: `Since ${o.since} you spent ${money(o.total)} at ${o.merchant}, over ${o.count} purchases.`,
          },
        ],
        checks: [
          { id: 'answer-total', kind: 'answer', numbers: [o.total], weight: 2 },
          {
            id: 'history-read',
            kind: 'call',
            tool: 'list_transactions',
            args: { account_id: { equals: chk.account_id } },
            weight: 1,
          },
          writes([]),
        ],
      };
    },
  ],
  ['transfer', 12, (c) => transferTask(c, 'ok')],
  ['transfer_insufficient', 7, (c) => transferTask(c, 'insufficient')],
  ['transfer_frozen', 5, (c) => transferTask(c, 'frozen')],
  ['transfer_limit', 4, (c) => transferTask(c, 'limit')],
  [
    'freeze_card',
    9,
    (c) => {
      const options = customers(c.world).flatMap((cu) =>
        cu.cards
          .filter((id) => c.world.cards[id].status === 'active')
          .map((id) => ({ cu, card: c.world.cards[id] })),
      );
      if (!options.length) return undefined;
      const { cu, card } = c.rng.pick(options);
      const who = identify(c, cu);
      const reason = c.rng.pick(['lost', 'stolen'] as const);
      const calls = [who.call, call('get_customer', { customer_id: cu.customer_id })];
      for (const id of cu.cards) {
        calls.push(call('get_card', { card_id: id }));
        if (id === card.card_id) break;
      }
      calls.push(call('freeze_card', { card_id: card.card_id, reason }));
      return {
        template: 'freeze_card',
        description: `Freeze card ${card.card_id} (${reason}).`,
        steps: [
          {
            user: `${reason === 'lost' ? 'I lost my debit card' : 'My debit card was stolen'}, the one ending in ${card.last_four}. Please freeze it right away. ${who.phrase}`,
            calls,
            answer: `Your card ending in ${card.last_four} is now frozen; no new purchases will go through.`,
          },
        ],
        checks: [
          {
            id: 'card-frozen',
            kind: 'state',
            server: 'bank',
            path: `$.cards[${JSON.stringify(card.card_id)}].status`,
            equals: 'frozen',
            weight: 3,
          },
          {
            id: 'freeze-reason',
            kind: 'state',
            server: 'bank',
            path: `$.cards[${JSON.stringify(card.card_id)}].frozen_reason`,
            equals: reason,
            weight: 1,
          },
          writes([{ tool: 'freeze_card', target: card.card_id }]),
          { id: 'answer-frozen', kind: 'answer', contains: ['frozen'], weight: 1 },
        ],
      };
    },
  ],
  ['dispute', 9, (c) => disputeTask(c, true)],
  ['dispute_too_old', 6, (c) => disputeTask(c, false)],
  [
    'pay_bill',
    9,
    (c) => {
      const options = customers(c.world).filter(
        (cu) =>
          accountOf(c.world, cu, 'checking').status === 'active' &&
          accountOf(c.world, cu, 'checking').balance > 30,
      );
      if (!options.length) return undefined;
      const cu = c.rng.pick(options);
      const chk = accountOf(c.world, cu, 'checking');
      const payee = c.world.payees[c.rng.pick(cu.payees)];
      const amount = amountIn(c, 25, Math.min(chk.balance, 400))!;
      const who = identify(c, cu);
      return {
        template: 'pay_bill',
        description: `Pay ${amount} to ${payee.payee_id} from ${chk.account_id}.`,
        steps: [
          {
            user: `${c.rng.pick(['Please pay', 'I need to pay', 'Send a payment of'])} ${money(amount)} to ${payee.name} from my checking account. ${who.phrase}`,
            calls: [
              who.call,
              call('get_customer', { customer_id: cu.customer_id }),
              call('list_payees', { customer_id: cu.customer_id }),
              call('pay_bill', { account_id: chk.account_id, payee_id: payee.payee_id, amount }),
            ],
            answer: `I paid ${money(amount)} to ${payee.name} from your checking account. The new balance is ${money(cents(chk.balance - amount))}.`,
          },
        ],
        checks: [
          {
            id: 'checking-balance',
            kind: 'state',
            server: 'bank',
            path: balancePath(chk.account_id),
            equals: cents(chk.balance - amount),
            weight: 2,
          },
          writes([{ tool: 'pay_bill', target: chk.account_id }]),
          { id: 'answer-amount', kind: 'answer', numbers: [amount], weight: 1 },
        ],
      };
    },
  ],
  [
    'add_payee_then_pay',
    6,
    (c) => {
      const options = customers(c.world).filter(
        (cu) =>
          accountOf(c.world, cu, 'checking').status === 'active' &&
          accountOf(c.world, cu, 'checking').balance > 60,
      );
      if (!options.length) return undefined;
      const cu = c.rng.pick(options);
      const chk = accountOf(c.world, cu, 'checking');
      const landlord = c.rng.chance(0.5);
      const name = `${c.rng.pick(FIRST_NAMES)} ${c.rng.pick(LAST_NAMES)}`;
      const accountNumber = c.rng.digits(c.rng.int(8, 12));
      const routing = c.rng.pick(['021000021', '026009593', '111000614', '121000248']);
      const amount = amountIn(c, 50, Math.min(chk.balance, landlord ? 2000 : 300))!;
      const who = identify(c, cu);
      const newPayee = 'P900001'; // the first id the world hands out (next_id starts at 1)
      const category = landlord ? 'rent' : 'person';
      return {
        template: 'add_payee_then_pay',
        description: `Add payee ${name} for ${cu.customer_id}, then pay ${amount}.`,
        steps: [
          {
            user: `${who.phrase} Please add ${landlord ? 'my landlord' : 'my friend'} ${name} as a payee: account number ${accountNumber}, routing number ${routing}.`,
            calls: [
              who.call,
              call('add_payee', {
                customer_id: cu.customer_id,
                name,
                account_number: accountNumber,
                routing_number: routing,
                category,
              }),
            ],
            answer: `${name} is now one of your payees (payee id ${newPayee}).`,
          },
          {
            user: `Great. Now send ${landlord ? 'them' : 'him or her'} ${money(amount)} from my checking account.`,
            calls: [
              call('get_customer', { customer_id: cu.customer_id }),
              call('pay_bill', { account_id: chk.account_id, payee_id: newPayee, amount }),
            ],
            answer: `Sent ${money(amount)} to ${name} from your checking account.`,
          },
        ],
        checks: [
          {
            id: 'payee-added',
            kind: 'state',
            server: 'bank',
            path: `$.payees[${JSON.stringify(newPayee)}].account_number`,
            equals: accountNumber,
            weight: 2,
          },
          {
            id: 'checking-balance',
            kind: 'state',
            server: 'bank',
            path: balancePath(chk.account_id),
            equals: cents(chk.balance - amount),
            weight: 2,
          },
          {
            id: 'pay-in-turn-2',
            kind: 'call',
            tool: 'pay_bill',
            turn: 1,
            args: { payee_id: { equals: newPayee } },
            ok: true,
            weight: 1,
          },
          writes([
            { tool: 'add_payee', target: cu.customer_id },
            { tool: 'pay_bill', target: chk.account_id },
          ]),
        ],
      };
    },
  ],
  [
    'balance_then_transfer',
    6,
    (c) => {
      const options = customers(c.world).filter(
        (cu) =>
          accountOf(c.world, cu, 'checking').status === 'active' &&
          accountOf(c.world, cu, 'savings').status === 'active' &&
          accountOf(c.world, cu, 'checking').balance > 40,
      );
      if (!options.length) return undefined;
      const cu = c.rng.pick(options);
      const chk = accountOf(c.world, cu, 'checking');
      const sav = accountOf(c.world, cu, 'savings');
      const amount = amountIn(c, 20, Math.min(chk.balance / 2, chk.daily_transfer_limit))!;
      const who = identify(c, cu);
      return {
        template: 'balance_then_transfer',
        description: `Report ${chk.account_id}'s balance, then move ${amount} to savings.`,
        steps: [
          {
            user: `Hi! ${who.phrase} How much is in my checking account right now?`,
            calls: [
              who.call,
              call('get_customer', { customer_id: cu.customer_id }),
              call('get_account', { account_id: chk.account_id }),
            ],
            answer: `Your checking account has ${money(chk.balance)}.`,
          },
          {
            user: `OK, please move ${money(amount)} of it into my savings account.`,
            calls: [
              call('transfer_between_accounts', {
                from_account_id: chk.account_id,
                to_account_id: sav.account_id,
                amount,
              }),
            ],
            answer: `Moved ${money(amount)} to savings; checking now holds ${money(cents(chk.balance - amount))}.`,
          },
        ],
        checks: [
          { id: 'answer-balance', kind: 'answer', turn: 0, numbers: [chk.balance], weight: 1 },
          {
            id: 'checking-balance',
            kind: 'state',
            server: 'bank',
            path: balancePath(chk.account_id),
            equals: cents(chk.balance - amount),
            weight: 2,
          },
          {
            id: 'savings-balance',
            kind: 'state',
            server: 'bank',
            path: balancePath(sav.account_id),
            equals: cents(sav.balance + amount),
            weight: 1,
          },
          writes([{ tool: 'transfer_between_accounts', target: chk.account_id }]),
        ],
      };
    },
  ],
];

/** A card charge disputed: opened when it is within the window (`inWindow`), else refused as too old. */
function disputeTask(c: Ctx, inWindow: boolean): Draft | undefined {
  const options = customers(c.world).flatMap((cu) =>
    uniquePurchases(c.world, cu)
      .filter((t) => {
        const age = daysBetween(t.date, c.world.today);
        return inWindow ? age <= DISPUTE_WINDOW_DAYS - 2 : age >= DISPUTE_WINDOW_DAYS + 10;
      })
      .map((t) => ({ cu, t })),
  );
  if (!options.length) return undefined;
  const { cu, t } = c.rng.pick(options);
  const who = identify(c, cu);
  const chk = accountOf(c.world, cu, 'checking');
  const duplicate = c.rng.chance(0.3);
  const reason = duplicate ? 'duplicate charge' : 'unauthorized';
  const ask = duplicate
    ? `I think I was charged twice for my ${money(-t.amount)} purchase at ${t.merchant} on ${t.date}. Please dispute that charge.`
    : `There's a ${money(-t.amount)} charge at ${t.merchant} on ${t.date} that I don't recognize. Please dispute it.`;
  const calls = [
    who.call,
    call('get_customer', { customer_id: cu.customer_id }),
    call('list_transactions', {
      account_id: chk.account_id,
      merchant: t.merchant!,
      since: t.date,
      until: t.date,
    }),
  ];
  const user = `${ask} ${who.phrase}`;
  return inWindow ? openedDispute(t, reason, user, calls) : refusedDispute(c, t, user, calls);
}

/** A state path of a field of the transaction. */
function transactionPath(t: Transaction, field: string): string {
  return `$.transactions[${JSON.stringify(t.transaction_id)}].${field}`;
}

/** The charge is recent enough: a dispute is opened with the reason given. */
function openedDispute(
  t: Transaction,
  reason: string,
  user: string,
  calls: ParsedToolCall[],
): Draft {
  const tPath = (f: string) => transactionPath(t, f);
  return {
    template: 'dispute',
    description: `Dispute transaction ${t.transaction_id} (${reason}).`,
    steps: [
      {
        user,
        calls: [
          ...calls,
          call('dispute_transaction', { transaction_id: t.transaction_id, reason }),
        ],
        answer: `I opened a dispute on the ${money(-t.amount)} charge at ${t.merchant} from ${t.date} (transaction ${t.transaction_id}).`,
      },
    ],
    checks: [
      {
        id: 'dispute-open',
        kind: 'state',
        server: 'bank',
        path: `${tPath('dispute')}.status`,
        equals: 'open',
        weight: 3,
      },
      {
        id: 'dispute-reason',
        kind: 'state',
        server: 'bank',
        path: `${tPath('dispute')}.reason`,
        equals: reason,
        weight: 1,
      },
      writes([{ tool: 'dispute_transaction', target: t.transaction_id }]),
      { id: 'answer-dispute', kind: 'answer', contains: ['dispute'], weight: 1 },
    ],
  };
}

/** The charge is past the dispute window: the dispute is refused and nothing changes. */
function refusedDispute(c: Ctx, t: Transaction, user: string, calls: ParsedToolCall[]): Draft {
  const tPath = (f: string) => transactionPath(t, f);
  return {
    template: 'dispute_too_old',
    description: `Refuse to dispute ${t.transaction_id}, ${daysBetween(t.date, c.world.today)} days old.`,
    refusal: true,
    steps: [
      {
        user,
        calls,
        answer: `That charge is from ${t.date}, more than ${DISPUTE_WINDOW_DAYS} days ago, so it can no longer be disputed.`,
      },
    ],
    checks: [
      {
        id: 'no-dispute-state',
        kind: 'state',
        server: 'bank',
        path: tPath('dispute'),
        exists: false,
        weight: 2,
      },
      writes([], 2),
      {
        id: 'answer-window',
        kind: 'answer',
        contains: [`${DISPUTE_WINDOW_DAYS} days`, 'too old', 'no longer'],
        mode: 'any',
        weight: 1,
      },
    ],
  };
}

/** The bank agent's tools, for the allow-list. */
export const BANK_TOOL_NAMES = BANK_TOOLS.map((t) => t.name);

/**
 * The bank tools that change the state, for the trajectory items: a new payee's name, routing
 * number and category are free (the state check reads back its account number).
 */
export const BANK_WRITE_TOOLS: WriteToolSpec[] = [
  { tool: 'transfer_between_accounts', target: 'from_account_id', collection: 'accounts' },
  {
    tool: 'add_payee',
    target: 'customer_id',
    collection: 'customers',
    free: ['name', 'routing_number', 'category'],
  },
  { tool: 'pay_bill', target: 'account_id', collection: 'accounts' },
  { tool: 'freeze_card', target: 'card_id', collection: 'cards' },
  { tool: 'dispute_transaction', target: 'transaction_id', collection: 'transactions' },
];

/**
 * Bank tasks: the world of the seed and one of a dozen templates (balances, spending sums,
 * transfers, bill payments, card freezes, disputes; refusals for insufficient funds, frozen
 * accounts, the daily limit and the dispute window; some over two user turns).
 */
export const BANK_GENERATOR: TaskGenerator = templatedGenerator({
  domain: 'bank',
  policy: BANK_POLICY,
  toolNames: BANK_TOOL_NAMES,
  writeTools: BANK_WRITE_TOOLS,
  createWorld: createBankWorld,
  templates: TEMPLATES,
  salt: { multiply: 6151, add: 3571 },
});
