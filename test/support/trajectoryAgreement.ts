import type { JsonObject, JsonValue } from '../../src/core/base/json';
import type { Environment } from '../../src/core/env/types';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import { actualValue } from '../../src/core/fidelity/responseValue';
import type { ParsedToolCall } from '../../src/core/protocol/actParser';
import type { Grade } from '../../src/core/tasks/checks/grade';
import { withoutStateItems } from '../../src/core/tasks/checks/grade';
import type { TaskGenerator } from '../../src/core/tasks/generator';
import { generateTasks } from '../../src/core/tasks/generator';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';
import { playReference } from '../../src/core/tasks/referencePlayer';
import type { WriteToolSpec } from '../../src/servers/common/trajectoryItems';
import { BANK_GENERATOR, BANK_WRITE_TOOLS } from '../../src/servers/bank/generator';
import { RETAIL_GENERATOR, RETAIL_WRITE_TOOLS } from '../../src/servers/retail/generator';
import { REPO } from './servers';

// Do a generated task's trajectory items (call, no_call, answer) reach the verdict its state checks
// reach? Each task is played for real: its reference solution, then solutions perturbed the way a
// policy goes wrong. Each episode is graded twice: by its state checks alone (the real run's
// verdict), and by its trajectory items alone, as an imagined replay of the same calls, whose
// rehearsals answered as the real tools did, is graded (state items not evaluated).

/**
 * How a played solution differs from the reference. Two probes are reported apart from the others:
 * `repeated-write` (a write of the reference made twice: a retried transfer), and `refused-attempt`
 * (in a task whose right answer is a refusal, the forbidden write is tried and the server refuses
 * it: the state is right, the trajectory is not; `no_call` items count attempts).
 */
export type Variant =
  | 'reference'
  | 'wrong-id'
  | 'wrong-value'
  | 'missing-write'
  | 'extra-write'
  | 'repeated-write'
  | 'refused-attempt';

/** The reference and the perturbations the agreement figure is taken over, in report order. */
export const VARIANTS: readonly Variant[] = [
  'reference',
  'wrong-id',
  'wrong-value',
  'missing-write',
  'extra-write',
];

/** Variants played to probe a limit of the items, outside the agreement figure. */
export const LIMIT_VARIANTS: readonly Variant[] = ['repeated-write', 'refused-attempt'];

/** One played episode and its two verdicts. */
export interface AgreementEpisode {
  taskId: string;
  domain: string;
  template: string;
  variant: Variant;
  /** Every state check passed (the real run's success). */
  stateSuccess: boolean;
  /** Every evaluated trajectory item passed (the imagined grade's success). */
  trajectorySuccess: boolean;
  /** The imagined grade's reward (studio rule). */
  trajectoryReward: number | null;
  /** The ids of the items that failed, state and trajectory. */
  failed: string[];
  /** What the perturbation did. */
  change?: string;
  /** The writes the server refused (error responses): they changed nothing. */
  refused: string[];
}

/** The perturbation kinds and write tools of a built-in domain. */
export interface StudyDomain {
  generator: TaskGenerator;
  writeTools: readonly WriteToolSpec[];
}

/** The two built-in domains of the study. */
export const STUDY_DOMAINS: readonly StudyDomain[] = [
  { generator: RETAIL_GENERATOR, writeTools: RETAIL_WRITE_TOOLS },
  { generator: BANK_GENERATOR, writeTools: BANK_WRITE_TOOLS },
];

type Entity = { [field: string]: JsonValue };
type World = { [collection: string]: JsonValue };
type Turns = { calls: ParsedToolCall[]; answer: string }[];

const entities = (world: World, collection: string): [string, Entity][] =>
  Object.entries((world[collection] ?? {}) as { [id: string]: Entity });

function copyTurns(task: TaskFile): Turns {
  return task.reference!.turns.map((t) => ({
    calls: t.calls.map((c) => ({ name: c.name, arguments: structuredClone(c.arguments) })),
    answer: t.answer,
  }));
}

/** Where the reference's writes are: [turn, call index, spec]. */
function writesOf(
  turns: Turns,
  tools: readonly WriteToolSpec[],
): [number, number, WriteToolSpec][] {
  const out: [number, number, WriteToolSpec][] = [];
  turns.forEach((t, i) =>
    t.calls.forEach((c, j) => {
      const spec = tools.find((w) => w.tool === c.name);
      if (spec) out.push([i, j, spec]);
    }),
  );
  return out;
}

const OWNER_FIELDS = ['user_id', 'customer_id', 'account_id'];

/** Another id of the target's collection, of the same owner when there is one (a plausible slip). */
function otherId(world: World, spec: WriteToolSpec, id: string, seed: number): string | undefined {
  const all = entities(world, spec.collection);
  const self = all.find(([k]) => k === id)?.[1];
  const owner = self && OWNER_FIELDS.find((f) => typeof self[f] === 'string');
  const others = all.filter(([k]) => k !== id);
  const siblings = owner ? others.filter(([, e]) => e[owner] === self[owner]) : [];
  const pool = siblings.length ? siblings : others;
  return pool.length ? pool[seed % pool.length][0] : undefined;
}

/** Reasons a tool takes, each with the one a slip gives instead. */
const OTHER_REASON: { [reason: string]: string } = {
  'no longer needed': 'ordered by mistake',
  'ordered by mistake': 'no longer needed',
  lost: 'stolen',
  stolen: 'lost',
  unauthorized: 'duplicate charge',
  'duplicate charge': 'unauthorized',
};

/**
 * Changes one argument of a write other than its target, one a state check may depend on (an
 * amount, a reason, a street, a destination account, an item left out); says what it did.
 */
function changeValue(
  args: Entity,
  spec: WriteToolSpec,
  world: World,
  seed: number,
): string | undefined {
  for (const key of Object.keys(args).sort()) {
    if (key === spec.target || spec.free?.includes(key)) continue;
    const v = args[key];
    let next: JsonValue | undefined;
    if (typeof v === 'number') next = v + 5;
    else if (typeof v === 'string' && OTHER_REASON[v]) next = OTHER_REASON[v];
    else if (key === 'address1') next = '99 Wrong Street';
    else if (key === 'account_number' && typeof v === 'string')
      next = v.slice(0, -1) + String((Number(v.slice(-1)) + 1) % 10);
    else if (key === 'to_account_id' && typeof v === 'string')
      next = otherId(world, { ...spec, collection: 'accounts' }, v, seed);
    else if (Array.isArray(v) && v.length > 1) next = v.slice(1);
    if (next === undefined) continue;
    args[key] = next;
    return `${key} ${JSON.stringify(next)} instead of ${JSON.stringify(v)}`;
  }
  return undefined;
}

/** The write a refusal task forbids, with the arguments the user asked for; undefined elsewhere. */
function forbiddenWrite(task: TaskFile, world: World, turns: Turns): ParsedToolCall | undefined {
  if (!task.tags?.includes('policy-refusal')) return undefined;
  const orderId = turns
    .flatMap((t) => t.calls)
    .map((c) => (c.arguments as Entity).order_id)
    .filter((id): id is string => typeof id === 'string')
    .at(-1);
  const order = orderId ? (world.orders as { [id: string]: Entity })[orderId] : undefined;
  const payment = order
    ? (order.payment_history as Entity[]).find((p) => p.transaction_type === 'payment')
    : undefined;
  const firstItem = order ? String((order.items as Entity[])[0].item_id) : '';
  const d = task.description ?? '';
  const call = (name: string, args: JsonObject): ParsedToolCall => ({ name, arguments: args });
  switch (task.tags[0]) {
    case 'cancel_refused':
      return orderId
        ? call('cancel_pending_order', { order_id: orderId, reason: 'no longer needed' })
        : undefined;
    case 'address_refused':
      return orderId
        ? call('modify_pending_order_address', { order_id: orderId, ...ADDRESS })
        : undefined;
    case 'return_refused':
      return orderId
        ? call('return_delivered_order_items', {
            order_id: orderId,
            item_ids: [firstItem],
            payment_method_id: String(payment?.payment_method_id),
          })
        : undefined;
    case 'exchange_unavailable': {
      const m = /exchange of (\S+) for unavailable (\S+)\.$/.exec(d);
      return m && orderId
        ? call('exchange_delivered_order_items', {
            order_id: orderId,
            item_ids: [m[1]],
            new_item_ids: [m[2]],
            payment_method_id: String(payment?.payment_method_id),
          })
        : undefined;
    }
    case 'transfer_insufficient':
    case 'transfer_frozen':
    case 'transfer_limit': {
      const m = /transfer of ([\d.]+) from (\S+) /.exec(d);
      const accounts = world.accounts as { [id: string]: Entity };
      const from = m ? accounts[m[2]] : undefined;
      const to = from
        ? Object.values(accounts).find(
            (a) => a.customer_id === from.customer_id && a.account_id !== from.account_id,
          )
        : undefined;
      return m && to
        ? call('transfer_between_accounts', {
            from_account_id: m[2],
            to_account_id: String(to.account_id),
            amount: Number(m[1]),
          })
        : undefined;
    }
    case 'dispute_too_old': {
      const m = /dispute (\S+), /.exec(d);
      return m
        ? call('dispute_transaction', { transaction_id: m[1], reason: 'unauthorized' })
        : undefined;
    }
    default:
      return undefined;
  }
}

/** The user or customer the task is about: named in a reference call, or owning what one names. */
function subjectOf(world: World, turns: Turns): string | undefined {
  for (const c of turns.flatMap((t) => t.calls)) {
    const a = c.arguments as Entity;
    for (const k of ['user_id', 'customer_id']) if (typeof a[k] === 'string') return a[k];
    const owners: [string, string, string][] = [
      ['order_id', 'orders', 'user_id'],
      ['account_id', 'accounts', 'customer_id'],
      ['from_account_id', 'accounts', 'customer_id'],
      ['card_id', 'cards', 'customer_id'],
    ];
    for (const [k, coll, field] of owners) {
      const e =
        typeof a[k] === 'string' ? (world[coll] as { [id: string]: Entity })?.[a[k]] : undefined;
      if (e && typeof e[field] === 'string') return e[field];
    }
  }
  return undefined;
}

const ADDRESS = {
  address1: '17 Harbor Lane',
  address2: '',
  city: 'Portland',
  state: 'ME',
  country: 'USA',
  zip: '04101',
};

/** Arguments of a write the server accepts, about the task's subject where possible. */
function extraWriteArgs(
  tool: string,
  world: World,
  subject: string | undefined,
  avoid: ReadonlySet<string>,
): JsonObject | undefined {
  const mine = (coll: string, field: string) =>
    entities(world, coll).filter(
      ([id, e]) => !avoid.has(id) && (subject === undefined || e[field] === subject),
    );
  const first = <T>(xs: T[]) => xs[0];
  switch (tool) {
    case 'modify_user_address': {
      const user = subject ?? first(entities(world, 'users'))?.[0];
      return user ? { user_id: user, ...ADDRESS } : undefined;
    }
    case 'cancel_pending_order':
    case 'modify_pending_order_address': {
      const pending = first(mine('orders', 'user_id').filter(([, o]) => o.status === 'pending'));
      if (!pending) return undefined;
      return tool === 'cancel_pending_order'
        ? { order_id: pending[0], reason: 'no longer needed' }
        : { order_id: pending[0], ...ADDRESS };
    }
    case 'return_delivered_order_items': {
      const d = first(mine('orders', 'user_id').filter(([, o]) => o.status === 'delivered'));
      if (!d) return undefined;
      const items = d[1].items as Entity[];
      const payments = d[1].payment_history as Entity[];
      const method = payments.find((p) => p.transaction_type === 'payment')?.payment_method_id;
      return { order_id: d[0], item_ids: [items[0].item_id], payment_method_id: method ?? '' };
    }
    case 'freeze_card': {
      const card = first(mine('cards', 'customer_id').filter(([, c]) => c.status === 'active'));
      return card ? { card_id: card[0], reason: 'lost' } : undefined;
    }
    case 'add_payee':
      return subject
        ? {
            customer_id: subject,
            name: 'Casey Extra',
            account_number: '55501234',
            routing_number: '021000021',
          }
        : undefined;
    case 'pay_bill':
    case 'transfer_between_accounts': {
      const accounts = mine('accounts', 'customer_id');
      const from = accounts.find(
        ([, a]) => a.type === 'checking' && a.status === 'active' && (a.balance as number) >= 50,
      );
      if (!from) return undefined;
      if (tool === 'pay_bill') {
        const payee = first(mine('payees', 'customer_id'));
        return payee ? { account_id: from[0], payee_id: payee[0], amount: 10 } : undefined;
      }
      const to = accounts.find(([, a]) => a.type === 'savings' && a.status === 'active');
      return to ? { from_account_id: from[0], to_account_id: to[0], amount: 10 } : undefined;
    }
    default:
      return undefined;
  }
}

/** The solution a variant plays, and what it changed; undefined when the variant does not apply. */
export function perturb(
  task: TaskFile,
  variant: Variant,
  world: World,
  tools: readonly WriteToolSpec[],
): { turns: Turns; change?: string } | undefined {
  const turns = copyTurns(task);
  if (variant === 'reference') return { turns };
  const seed = task.seed ?? 0;
  const writes = writesOf(turns, tools);
  if (variant === 'refused-attempt') {
    const attempt = forbiddenWrite(task, world, turns);
    if (!attempt) return undefined;
    turns[turns.length - 1].calls.push(attempt);
    return {
      turns,
      change: `tried ${attempt.name} ${JSON.stringify(attempt.arguments).slice(0, 80)}`,
    };
  }
  if (variant !== 'extra-write') {
    if (!writes.length) return undefined;
    const [i, j, spec] = writes[seed % writes.length];
    const call = turns[i].calls[j];
    if (variant === 'wrong-value') {
      const changed = changeValue(call.arguments as Entity, spec, world, seed);
      return changed ? { turns, change: `${call.name} with ${changed}` } : undefined;
    }
    if (variant === 'repeated-write') {
      turns[i].calls.splice(j + 1, 0, structuredClone(call));
      return { turns, change: `made ${call.name} twice` };
    }
    if (variant === 'missing-write') {
      turns[i].calls.splice(j, 1);
      return { turns, change: `left out ${call.name}` };
    }
    const args = call.arguments as Entity;
    const id = String(args[spec.target]);
    const other = otherId(world, spec, id, seed);
    if (!other) return undefined;
    args[spec.target] = other;
    return { turns, change: `${call.name} on ${other} instead of ${id}` };
  }
  // extra-write: a write of a tool the reference never writes with (the first that fits from a
  // seeded start), made just before the reference's first write, while the world is still the
  // seed's: the arguments chosen on that world are ones the server accepts.
  const used = new Set(writes.map(([, , s]) => s.tool));
  // Not on what the reference writes to: the extra write must not make the reference's fail.
  const targets = new Set(
    writes.map(([i, j, s]) => String((turns[i].calls[j].arguments as Entity)[s.target])),
  );
  const subject = subjectOf(world, turns);
  const [ti, ci] = writes.length
    ? writes[0]
    : [turns.length - 1, turns[turns.length - 1].calls.length];
  for (let k = 0; k < tools.length; k++) {
    const tool = tools[(seed + k) % tools.length].tool;
    if (used.has(tool)) continue;
    const args = extraWriteArgs(tool, world, subject, targets);
    if (!args) continue;
    turns[ti].calls.splice(ci, 0, { name: tool, arguments: args });
    return { turns, change: `added ${tool} ${JSON.stringify(args).slice(0, 80)}` };
  }
  return undefined;
}

/** Success of the state items alone: all evaluated and passed. */
export function stateSuccess(grade: Grade): boolean {
  const state = grade.checks.filter((c) => c.kind === 'state');
  return state.length > 0 && state.every((c) => c.passed === true);
}

/** The grade by the trajectory items alone: the imagined grade of the same episode. */
export function trajectoryGrade(grade: Grade): Grade {
  return withoutStateItems(grade, 'graded by the trajectory items alone');
}

/** Plays every variant of a task against `env` and grades each episode twice. */
export async function playVariants(
  task: TaskFile,
  env: Environment,
  tools: readonly WriteToolSpec[],
): Promise<AgreementEpisode[]> {
  await env.startEpisode(task.seed);
  const world = (await env.snapshot())[task.domain!] as World;
  const out: AgreementEpisode[] = [];
  for (const variant of [...VARIANTS, ...LIMIT_VARIANTS]) {
    const p = perturb(task, variant, world, tools);
    if (!p) continue;
    const play = await playReference({ ...task, reference: { turns: p.turns } }, env);
    const imagined = trajectoryGrade(play.grade);
    const refused = play.transcript.turns
      .flatMap((t) => t.calls)
      .filter((c) => tools.some((w) => w.tool === c.name))
      .filter((c) => !c.outcome?.response || actualValue(c.outcome.response).isError)
      .map((c) => c.name);
    out.push({
      taskId: task.id,
      domain: task.domain!,
      template: task.tags![0],
      variant,
      stateSuccess: stateSuccess(play.grade),
      trajectorySuccess: imagined.success === true,
      trajectoryReward: imagined.reward,
      failed: play.grade.checks.filter((c) => c.passed === false).map((c) => c.id),
      refused,
      ...(p.change ? { change: p.change } : {}),
    });
  }
  return out;
}

/** Plays the first `count` train tasks of a domain, every variant, against its real server. */
export async function studyDomain(
  domain: StudyDomain,
  count: number,
  builtinServersDir: string,
): Promise<AgreementEpisode[]> {
  const tasks = generateTasks(domain.generator, { count, split: 'train' });
  const env = await openEnvironment(
    tasks[0].servers,
    { baseDir: REPO, allowTools: tasks[0].tools },
    { builtinServersDir },
  );
  const out: AgreementEpisode[] = [];
  try {
    for (const task of tasks) out.push(...(await playVariants(task, env, domain.writeTools)));
  } finally {
    await env.close();
  }
  return out;
}

/** Agreement of one variant (or all): episodes, agreeing ones, and the two kinds of disagreement. */
export interface AgreementSummary {
  episodes: number;
  agree: number;
  /** The state checks pass, the trajectory items fail. */
  stateOnly: AgreementEpisode[];
  /** The trajectory items pass, the state checks fail. */
  trajectoryOnly: AgreementEpisode[];
  /** Episodes each verdict calls a success. */
  stateSuccesses: number;
  trajectorySuccesses: number;
}

/** Sums up episodes. */
export function summarize(episodes: readonly AgreementEpisode[]): AgreementSummary {
  return {
    episodes: episodes.length,
    agree: episodes.filter((e) => e.stateSuccess === e.trajectorySuccess).length,
    stateOnly: episodes.filter((e) => e.stateSuccess && !e.trajectorySuccess),
    trajectoryOnly: episodes.filter((e) => !e.stateSuccess && e.trajectorySuccess),
    stateSuccesses: episodes.filter((e) => e.stateSuccess).length,
    trajectorySuccesses: episodes.filter((e) => e.trajectorySuccess).length,
  };
}

/** A Markdown report: one row per variant and in all, then the disagreements by kind. */
export function formatReport(episodes: readonly AgreementEpisode[]): string {
  const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)}%` : '-');
  const lines = [
    '| variant | episodes | agree | state ✓ items ✗ | state ✗ items ✓ | successes (state / items) |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  const row = (name: string, s: AgreementSummary) =>
    lines.push(
      `| ${name} | ${s.episodes} | ${s.agree} (${pct(s.agree, s.episodes)}) | ${s.stateOnly.length} | ${s.trajectoryOnly.length} | ${s.stateSuccesses} / ${s.trajectorySuccesses} |`,
    );
  const main = episodes.filter((e) => VARIANTS.includes(e.variant));
  for (const v of VARIANTS) row(v, summarize(main.filter((e) => e.variant === v)));
  row('**all**', summarize(main));
  for (const v of LIMIT_VARIANTS)
    row(`${v} (a probe, not in all)`, summarize(episodes.filter((e) => e.variant === v)));
  const all = summarize(episodes);
  const groups = new Map<string, AgreementEpisode[]>();
  for (const e of [...all.stateOnly, ...all.trajectoryOnly]) {
    const key = `${e.variant}, ${e.stateSuccess ? 'state ✓ items ✗' : 'state ✗ items ✓'}, ${e.template}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  if (groups.size) {
    lines.push('', 'Disagreements by kind:');
    for (const [key, list] of [...groups].sort((a, b) => b[1].length - a[1].length))
      lines.push(
        `- ${key}: ${list.length} (e.g. ${list[0].taskId}: ${list[0].change ?? 'reference'}; failed ${list[0].failed.join(', ') || 'nothing'}${list[0].refused.length ? `; the server refused ${list[0].refused.join(', ')}` : ''})`,
      );
  }
  return lines.join('\n');
}
