import type { ParsedToolCall } from '../../core/protocol/actParser';
import type { TaskGenerator } from '../../core/tasks/generator';
import { NO_DEMONSTRATION_TAG, splitOfSeed } from '../../core/tasks/generator';
import type { CheckSpec, TaskFile } from '../../core/tasks/format/taskFile';
import { Random } from '../common/random';
import { trajectoryItems } from '../common/trajectoryItems';
import { BANK_WRITE_TOOLS, writes } from './generator';
import { createForesightWorld } from './foresightWorld';
import type { TransferRestriction } from './transferRule';
import { RESTRICTION_REASONS, transferRestriction } from './transferRule';
import type { Account, BankState } from './world';
import { cents } from './world';

/**
 * The three generators of the foresight family: `main` (`bank-foresight`), whose refused tasks are
 * tagged `no-demonstration`; `twin` (`bank-foresight-twin`), the same tasks with other ids and no such
 * tag; `logging` (`bank-foresight-logging`), the same requests played by a logging policy whose
 * reference attempts every transfer, refused or not.
 */
export type ForesightVariant = 'main' | 'twin' | 'logging';

const FAMILY_NAMES: Record<ForesightVariant, string> = {
  main: 'bank-foresight',
  twin: 'bank-foresight-twin',
  logging: 'bank-foresight-logging',
};

/** The agent's instructions: the cost of a refused attempt, but not the rule that refuses. */
export const FORESIGHT_POLICY = [
  "You are a support agent of a retail bank. The customer is already identified and names their accounts by id; you move money between the customer's own accounts when they ask.",
  '',
  'Policy:',
  '- The bank refuses some transfers. A transfer attempt that the bank refuses counts against you: when a transfer would be refused, do not attempt it; tell the customer why it cannot be done.',
  '- State amounts in dollars with cents.',
].join('\n');

/** The tools offered: one free lookup that shows every input of the rule, and the write. */
const TOOLS = ['get_account', 'transfer_between_accounts'];
const TRANSFER = 'transfer_between_accounts';
const TRANSFER_WRITE = BANK_WRITE_TOOLS.filter((w) => w.tool === TRANSFER);

/** The account kinds an allowed task transfers out of, drawn evenly before a candidate is chosen. */
const ALLOWED_KINDS = ['checking', 'savings', 'money_market'] as const;
/** The restrictions a refused task meets, drawn evenly likewise. */
const RESTRICTIONS: readonly TransferRestriction[] = ['cd', 'ira', 'joint'];

/** How the customer names an account type. */
const TYPE_WORDS: Record<Account['type'], string> = {
  checking: 'checking account',
  savings: 'savings account',
  money_market: 'money market account',
  cd: 'certificate of deposit',
  ira: 'retirement account',
};

/** What a refusal answer must say (any of them, case ignored): the reason, never merely an id. */
const REASON_KEYWORDS: Record<TransferRestriction, string[]> = {
  cd: ['certificate of deposit', 'matur'],
  ira: ['retirement'],
  joint: ['joint'],
};

/**
 * Whether the task of a seed is refused: half the seeds, alternating so that every split is halved
 * too (a seed's split is `seed % 10`: odd seeds are refused in even decades, even seeds in odd ones).
 */
export function foresightRefusedSeed(seed: number): boolean {
  return (seed + Math.floor(seed / 10)) % 2 === 1;
}

/** One transfer a customer could ask for in the foresight world. */
interface Transfer {
  from: Account;
  to: Account;
  amount: number;
}

const money = (n: number) => `$${n.toFixed(2)}`;
const balancePath = (id: string) => `$.accounts[${JSON.stringify(id)}].balance`;
const accountWords = (a: Account) =>
  `${a.ownership === 'joint' ? 'our joint' : 'my'} ${TYPE_WORDS[a.type]} ${a.account_id}`;

/** A round amount the source holds and may send today (the rule alone decides the verdict). */
function amountFor(rng: Random, from: Account): number {
  const hi = Math.min(from.balance, from.daily_transfer_limit - from.transferred_today, 3000);
  const steps = Math.floor((hi - 20) / 5);
  const base = 20 + 5 * rng.int(0, Math.max(0, steps));
  return rng.chance(0.3) && base + 0.99 <= hi ? cents(base + rng.int(1, 99) / 100) : base;
}

/**
 * Every transfer of the world whose verdict is `refused`: out of an active account that holds at
 * least $25 and may still send it, into another active checking, savings or money market account of
 * the same customer (joint or not: only the source decides).
 */
function candidates(world: BankState, refused: boolean): { from: Account; to: Account }[] {
  const out: { from: Account; to: Account }[] = [];
  for (const customer of Object.values(world.customers)) {
    const accounts = customer.accounts.map((id) => world.accounts[id]);
    for (const from of accounts) {
      const room = Math.min(from.balance, from.daily_transfer_limit - from.transferred_today);
      if (from.status !== 'active' || room < 25) continue;
      if ((transferRestriction(from) !== undefined) !== refused) continue;
      for (const to of accounts)
        if (
          to !== from &&
          to.status === 'active' &&
          (ALLOWED_KINDS as readonly string[]).includes(to.type)
        )
          out.push({ from, to });
    }
  }
  return out;
}

/** The seed's transfer: a kind (or restriction) drawn evenly, then a candidate of that kind. */
function drawTransfer(world: BankState, rng: Random, refused: boolean): Transfer {
  const all = candidates(world, refused);
  const kind = refused ? rng.pick(RESTRICTIONS) : rng.pick(ALLOWED_KINDS);
  const ofKind = all.filter((c) =>
    refused ? transferRestriction(c.from) === kind : c.from.type === kind,
  );
  const pool = ofKind.length ? ofKind : all;
  if (!pool.length) throw new Error(`the foresight world of this seed has no transfer to ask for`);
  const { from, to } = rng.pick(pool);
  return { from, to, amount: amountFor(rng, from) };
}

/** What the user asks: the amount and both accounts by id, so that nothing needs looking up. */
function request(rng: Random, t: Transfer): string {
  const verb = rng.pick(['Please move', 'Can you transfer', "I'd like to transfer"]);
  return `${verb} ${money(t.amount)} from ${accountWords(t.from)} to ${accountWords(t.to)}.`;
}

function transferCall(t: Transfer): ParsedToolCall {
  return {
    name: TRANSFER,
    arguments: {
      from_account_id: t.from.account_id,
      to_account_id: t.to.account_id,
      amount: t.amount,
    },
  };
}

/** The transfer is made: both balances move, the write log holds it, the answer names the amount. */
function madeChecks(t: Transfer): CheckSpec[] {
  return [
    {
      id: 'from-balance',
      kind: 'state',
      server: 'bank',
      path: balancePath(t.from.account_id),
      equals: cents(t.from.balance - t.amount),
      weight: 2,
    },
    {
      id: 'to-balance',
      kind: 'state',
      server: 'bank',
      path: balancePath(t.to.account_id),
      equals: cents(t.to.balance + t.amount),
      weight: 2,
    },
    { id: 'answer-amount', kind: 'answer', numbers: [t.amount], weight: 1 },
  ];
}

/** The transfer is not made: the source keeps its balance and the answer names the reason. */
function unmadeChecks(t: Transfer, restriction: TransferRestriction): CheckSpec[] {
  return [
    {
      id: 'from-unchanged',
      kind: 'state',
      server: 'bank',
      path: balancePath(t.from.account_id),
      equals: t.from.balance,
      weight: 2,
    },
    {
      id: 'answer-reason',
      kind: 'answer',
      contains: REASON_KEYWORDS[restriction],
      mode: 'any',
      weight: 1,
    },
  ];
}

/** What the agent answers after the transfer was made. */
function madeAnswer(t: Transfer): string {
  return `Done: ${money(t.amount)} moved from your ${TYPE_WORDS[t.from.type]} ${t.from.account_id} to your ${TYPE_WORDS[t.to.type]} ${t.to.account_id}. ${t.from.account_id} now holds ${money(cents(t.from.balance - t.amount))}.`;
}

/** What the agent answers when the rule refuses the transfer: before trying, or after (logging). */
function refusalAnswer(t: Transfer, restriction: TransferRestriction, tried: boolean): string {
  const why = `${t.from.account_id} ${RESTRICTION_REASONS[restriction]}.`;
  return tried ? `The bank refused the transfer: ${why}` : `I cannot make that transfer: ${why}`;
}

/**
 * A foresight task: a transfer between two of the customer's own accounts, named by id, that the
 * bank's transfer rule (`transferRule.ts`) allows on half the seeds and refuses on the other half.
 * The reference never reads: it knows the rule. Allowed, it transfers; refused, it answers with the
 * reason and attempts nothing, and an attempt fails the task (the `no_call` item counts attempts,
 * which the server refuses and so never changes the state). The `logging` variant's reference
 * attempts the transfer either way, and its checks grade that attempt and an answer true to its
 * outcome.
 */
function foresightTask(variant: ForesightVariant, seed: number): TaskFile {
  const world = createForesightWorld(seed);
  const rng = new Random(seed * 4099 + 0x0f05);
  const refused = foresightRefusedSeed(seed);
  const t = drawTransfer(world, rng, refused);
  const restriction = transferRestriction(t.from);
  const user = request(rng, t);
  const family = FAMILY_NAMES[variant];
  const logging = variant === 'logging';
  const calls = logging || !restriction ? [transferCall(t)] : [];
  const answer = restriction ? refusalAnswer(t, restriction, logging) : madeAnswer(t);
  const gradedChecks = restriction ? unmadeChecks(t, restriction) : madeChecks(t);
  const target = [{ tool: TRANSFER, target: t.from.account_id }];
  const checks: CheckSpec[] = logging
    ? [
        {
          id: 'transfer-attempted',
          kind: 'call',
          tool: TRANSFER,
          args: {
            from_account_id: { equals: t.from.account_id },
            to_account_id: { equals: t.to.account_id },
            amount: { equals: t.amount },
          },
          max: 1,
          weight: 2,
          description: 'the logging policy attempted the transfer, whatever the rule says',
        },
        ...gradedChecks,
      ]
    : [
        ...gradedChecks,
        restriction ? writes([], 2) : writes(target, 1, 'transfer'),
        ...trajectoryItems([{ calls }], TRANSFER_WRITE),
      ];
  const verdict = restriction ? 'refused' : 'allowed';
  return {
    $schema: '../../schemas/task.schema.json',
    version: 1,
    id: `${family}-${String(seed).padStart(4, '0')}`,
    description: `${logging ? 'Attempt' : restriction ? 'Refuse' : 'Make'} a transfer of ${t.amount} from ${t.from.account_id} (${t.from.type}, ${t.from.ownership ?? 'individual'}) to ${t.to.account_id}${restriction ? `: refused (${restriction})` : ''}.`,
    domain: 'bank',
    split: splitOfSeed(seed),
    seed,
    tags: [
      family,
      `foresight-${verdict}`,
      ...(restriction ? [`restriction-${restriction}`] : []),
      ...(restriction && !logging ? ['policy-refusal'] : []),
      ...(restriction && variant === 'main' ? [NO_DEMONSTRATION_TAG] : []),
      ...(logging ? ['logging'] : []),
    ],
    system: FORESIGHT_POLICY,
    turns: [{ user }],
    servers: { bank: { builtin: 'bank', args: ['--world', 'foresight'] } },
    tools: TOOLS,
    checks,
    limits: { maxTurns: 6, maxCallsPerTurn: 2, callTimeoutMs: 10_000 },
    reference: { turns: [{ calls, answer }] },
  };
}

/** The generator of a foresight variant (see {@link ForesightVariant}). */
function foresightGenerator(variant: ForesightVariant): TaskGenerator {
  return { domain: 'bank', generate: (seed) => foresightTask(variant, seed) };
}

/**
 * `bank-foresight`: a family where foresight pays. The user asks for a transfer between two of their
 * accounts and names both by id; a stationary rule over the source account's type and ownership
 * (`transferRule.ts`), which `get_account` shows and the instructions do not state, refuses half of
 * them, and a refused attempt fails the task. Its refused tasks are tagged `no-demonstration`: a
 * recipe's act demonstrations (`rehearse generate bank-foresight --demonstrations`) never show one,
 * while logged write calls (`bank-foresight-logging`) show the rule to the rehearse role.
 */
export const BANK_FORESIGHT_GENERATOR = foresightGenerator('main');

/**
 * `bank-foresight-twin`: the same tasks as `bank-foresight` (ids `bank-foresight-twin-<seed>`),
 * without the `no-demonstration` tag, so its act demonstrations do show refusals: the falsifier where
 * rehearsal should add nothing the act does not already know.
 */
export const BANK_FORESIGHT_TWIN_GENERATOR = foresightGenerator('twin');

/**
 * `bank-foresight-logging`: the same requests, played by a logging policy whose reference attempts
 * every transfer, so `rehearse run --policy reference` then `rehearse export --roles rehearse` gives
 * the rehearse role the real responses, ok and refused, of the bank's rule.
 */
export const BANK_FORESIGHT_LOGGING_GENERATOR = foresightGenerator('logging');
