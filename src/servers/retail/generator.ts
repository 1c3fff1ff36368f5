import type { JsonObject } from '../../core/base/json';
import type { ParsedToolCall } from '../../core/protocol/actParser';
import type { TaskGenerator } from '../../core/tasks/generator';
import type { CheckSpec } from '../../core/tasks/format/taskFile';
import type { Random } from '../common/random';
import type { TaskDraft as Draft } from '../common/templates';
import { templatedGenerator } from '../common/templates';
import type { WriteToolSpec } from '../common/trajectoryItems';
import { RETAIL_POLICY } from './policy';
import { RETAIL_TOOLS } from './tools';
import type { Address, Order, OrderItem, PaymentMethod, RetailState, User } from './world';
import { cents, createRetailWorld, randomAddress } from './world';

interface Ctx {
  world: RetailState;
  rng: Random;
}

const REFUSALS = ['cannot', "can't", 'unable', 'not able', 'not possible'];
const call = (name: string, args: JsonObject): ParsedToolCall => ({ name, arguments: args });
const addr = (a: Address): JsonObject => ({ ...a });
const money = (n: number) => `$${n.toFixed(2)}`;
const orderPath = (id: string, field: string) => `$.orders[${JSON.stringify(id)}].${field}`;
const writes = (list: { tool: string; target: string }[], weight = 1): CheckSpec => ({
  id: 'writes',
  kind: 'state',
  server: 'retail',
  path: '$.writes',
  equals: list,
  weight,
  description: list.length ? 'exactly the requested change was made' : 'nothing was changed',
});
const refusal = (weight = 1): CheckSpec => ({
  id: 'answer-refuses',
  kind: 'answer',
  contains: REFUSALS,
  mode: 'any',
  weight,
  description: 'the agent tells the user it cannot be done',
});
const addressLine = (a: Address) =>
  `${a.address1}${a.address2 ? `, ${a.address2}` : ''}, ${a.city}, ${a.state} ${a.zip}`;
const itemLabel = (i: OrderItem) => `${i.name} (${Object.values(i.options).join(', ')})`;

function usersOf(w: RetailState): User[] {
  return Object.values(w.users);
}

function ordersOf(w: RetailState, u: User): Order[] {
  return u.orders.map((id) => w.orders[id]);
}

/** Pick a (user, order) whose order satisfies `pred`. */
function pickOrder(
  c: Ctx,
  pred: (o: Order, u: User) => boolean,
): { user: User; order: Order } | undefined {
  const candidates = usersOf(c.world).flatMap((u) =>
    ordersOf(c.world, u)
      .filter((o) => pred(o, u))
      .map((order) => ({ user: u, order })),
  );
  return candidates.length ? c.rng.pick(candidates) : undefined;
}

/** How the user identifies themself, and the call that finds their id. */
function identify(c: Ctx, u: User): { phrase: string; call: ParsedToolCall } {
  if (c.rng.chance(0.6))
    return {
      phrase: c.rng.pick([`My email is ${u.email}.`, `My email address is ${u.email}.`]),
      call: call('find_user_id_by_email', { email: u.email }),
    };
  return {
    phrase: c.rng.pick([
      `I'm ${u.name.first_name} ${u.name.last_name}, zip code ${u.address.zip}.`,
      `My name is ${u.name.first_name} ${u.name.last_name} and my zip is ${u.address.zip}.`,
    ]),
    call: call('find_user_id_by_name_zip', {
      first_name: u.name.first_name,
      last_name: u.name.last_name,
      zip: u.address.zip,
    }),
  };
}

/**
 * How the user names the order: by id, or by a product only that order has (then the agent must
 * read the user's orders one by one). Returns the phrase and the lookup calls after identification.
 */
function nameOrder(c: Ctx, u: User, o: Order): { phrase: string; calls: ParsedToolCall[] } {
  const others = ordersOf(c.world, u).filter((x) => x.order_id !== o.order_id);
  const unique = o.items.filter((i) => !others.some((x) => x.items.some((j) => j.name === i.name)));
  if (unique.length && c.rng.chance(0.35)) {
    const item = c.rng.pick(unique);
    const calls = [call('get_user_details', { user_id: u.user_id })];
    for (const id of u.orders) {
      calls.push(call('get_order_details', { order_id: id }));
      if (id === o.order_id) break;
    }
    return { phrase: `the order with the ${item.name}`, calls };
  }
  return {
    phrase: `order ${o.order_id}`,
    calls: [call('get_order_details', { order_id: o.order_id })],
  };
}

function originalPayment(o: Order): string {
  return o.payment_history.find((p) => p.transaction_type === 'payment')!.payment_method_id;
}

function methodPhrase(m: PaymentMethod): string {
  if (m.source === 'credit_card') return `${m.brand} card ending in ${m.last_four}`;
  if (m.source === 'paypal') return 'PayPal account';
  return 'gift card';
}

const TEMPLATES: [string, number, (c: Ctx) => Draft | undefined][] = [
  [
    'order_status',
    10,
    (c) => {
      const p = pickOrder(c, () => true);
      if (!p) return undefined;
      const { user, order } = p;
      const who = identify(c, user);
      const which = nameOrder(c, user, order);
      const ask = c.rng.pick([
        `Hi, what's the status of ${which.phrase}?`,
        `Can you tell me where ${which.phrase} stands?`,
        `Has ${which.phrase} shipped yet?`,
      ]);
      const tracking = order.fulfillments[0]?.tracking_id;
      return {
        template: 'order_status',
        description: `Report the status of ${order.order_id} (${order.status}).`,
        steps: [
          {
            user: `${ask} ${who.phrase}`,
            calls: [who.call, ...which.calls],
            answer: `Your order ${order.order_id} is ${order.status}.${tracking ? ` The tracking number is ${tracking}.` : ''}`,
          },
        ],
        checks: [
          {
            id: 'order-read',
            kind: 'call',
            tool: 'get_order_details',
            args: { order_id: { equals: order.order_id } },
            weight: 1,
          },
          { id: 'answer-status', kind: 'answer', contains: [order.status], weight: 2 },
          writes([]),
        ],
      };
    },
  ],
  [
    'cancel_pending',
    14,
    (c) => {
      const p = pickOrder(c, (o) => o.status === 'pending');
      if (!p) return undefined;
      const { user, order } = p;
      const who = identify(c, user);
      const which = nameOrder(c, user, order);
      const reason = c.rng.pick(['no longer needed', 'ordered by mistake'] as const);
      const why =
        reason === 'no longer needed'
          ? c.rng.pick(["I don't need it anymore", 'I no longer need it'])
          : c.rng.pick(['I ordered it by mistake', 'I placed it by accident']);
      const total = order.payment_history[0].amount;
      return {
        template: 'cancel_pending',
        description: `Cancel pending order ${order.order_id} (${reason}).`,
        steps: [
          {
            user: `${c.rng.pick(['Please cancel', "I'd like to cancel", 'I want to cancel'])} ${which.phrase}, ${why}. ${who.phrase}`,
            calls: [
              who.call,
              ...which.calls,
              call('cancel_pending_order', { order_id: order.order_id, reason }),
            ],
            answer: `Order ${order.order_id} is now cancelled. ${money(total)} will be refunded to the original payment method.`,
          },
        ],
        checks: [
          {
            id: 'order-cancelled',
            kind: 'state',
            server: 'retail',
            path: orderPath(order.order_id, 'status'),
            equals: 'cancelled',
            weight: 3,
          },
          {
            id: 'cancel-reason',
            kind: 'state',
            server: 'retail',
            path: orderPath(order.order_id, 'cancel_reason'),
            equals: reason,
            weight: 1,
          },
          writes([{ tool: 'cancel_pending_order', target: order.order_id }], 2),
          { id: 'answer-cancelled', kind: 'answer', contains: ['cancel'], weight: 1 },
        ],
      };
    },
  ],
  [
    'cancel_refused',
    10,
    (c) => {
      const p = pickOrder(c, (o) => o.status === 'delivered' || o.status === 'processed');
      if (!p) return undefined;
      const { user, order } = p;
      const who = identify(c, user);
      const which = nameOrder(c, user, order);
      return {
        template: 'cancel_refused',
        description: `Refuse to cancel ${order.status} order ${order.order_id}.`,
        steps: [
          {
            user: `${c.rng.pick(['Please cancel', 'I need to cancel', 'Cancel'])} ${which.phrase}, ${c.rng.pick(["I don't need it anymore", 'I changed my mind'])}. ${who.phrase}`,
            calls: [who.call, ...which.calls],
            answer: `I'm sorry, but order ${order.order_id} is already ${order.status}, so it cannot be cancelled; only pending orders can.${order.status === 'delivered' ? ' You can request a return instead.' : ''}`,
          },
        ],
        checks: [
          {
            id: 'order-unchanged',
            kind: 'state',
            server: 'retail',
            path: orderPath(order.order_id, 'status'),
            equals: order.status,
            weight: 2,
          },
          writes([], 2),
          { id: 'answer-status', kind: 'answer', contains: [order.status], weight: 1 },
          refusal(),
        ],
      };
    },
  ],
  [
    'return_items',
    12,
    (c) => {
      const p = pickOrder(c, (o) => o.status === 'delivered');
      if (!p) return undefined;
      const { user, order } = p;
      const who = identify(c, user);
      const items = c.rng.sample(order.items, c.rng.int(1, Math.min(2, order.items.length)));
      const itemIds = order.items.filter((i) => items.includes(i)).map((i) => i.item_id);
      const giftCards = Object.values(user.payment_methods).filter((m) => m.source === 'gift_card');
      const method =
        giftCards.length && c.rng.chance(0.3)
          ? giftCards[0]
          : user.payment_methods[originalPayment(order)];
      const refund = cents(items.reduce((s, i) => s + i.price, 0));
      return {
        template: 'return_items',
        description: `Return ${itemIds.length} item(s) of delivered order ${order.order_id}, refund to ${method.id}.`,
        steps: [
          {
            user: `${c.rng.pick(['I want to return', "I'd like to return", 'Please start a return for'])} the ${items.map(itemLabel).join(' and the ')} from order ${order.order_id}. Please refund it to my ${methodPhrase(method)}. ${who.phrase}`,
            calls: [
              who.call,
              call('get_order_details', { order_id: order.order_id }),
              call('get_user_details', { user_id: user.user_id }),
              call('return_delivered_order_items', {
                order_id: order.order_id,
                item_ids: itemIds,
                payment_method_id: method.id,
              }),
            ],
            answer: `The return of the ${items.map((i) => i.name).join(' and the ')} from order ${order.order_id} is requested. The refund of ${money(refund)} will go to your ${methodPhrase(method)}.`,
          },
        ],
        checks: [
          {
            id: 'return-requested',
            kind: 'state',
            server: 'retail',
            path: orderPath(order.order_id, 'status'),
            equals: 'return requested',
            weight: 2,
          },
          {
            id: 'return-items',
            kind: 'state',
            server: 'retail',
            path: orderPath(order.order_id, 'return_items'),
            equals: itemIds.slice().sort(),
            weight: 2,
          },
          {
            id: 'refund-method',
            kind: 'state',
            server: 'retail',
            path: orderPath(order.order_id, 'return_payment_method_id'),
            equals: method.id,
            weight: 1,
          },
          writes([{ tool: 'return_delivered_order_items', target: order.order_id }]),
          { id: 'answer-return', kind: 'answer', contains: ['return'], weight: 1 },
        ],
      };
    },
  ],
  [
    'return_refused',
    6,
    (c) => {
      const p = pickOrder(c, (o) => o.status === 'pending' || o.status === 'processed');
      if (!p) return undefined;
      const { user, order } = p;
      const who = identify(c, user);
      const item = c.rng.pick(order.items);
      return {
        template: 'return_refused',
        description: `Refuse to return an item of ${order.status} order ${order.order_id}.`,
        steps: [
          {
            user: `I'd like to return the ${item.name} from order ${order.order_id}. ${who.phrase}`,
            calls: [who.call, call('get_order_details', { order_id: order.order_id })],
            answer: `Order ${order.order_id} is ${order.status} and has not been delivered yet, so it cannot be returned.${order.status === 'pending' ? ' Since it is still pending, I can cancel it instead if you like.' : ''}`,
          },
        ],
        checks: [
          {
            id: 'order-unchanged',
            kind: 'state',
            server: 'retail',
            path: orderPath(order.order_id, 'status'),
            equals: order.status,
            weight: 2,
          },
          writes([], 2),
          refusal(),
        ],
      };
    },
  ],
  ['exchange_item', 10, (c) => exchangeDraft(c, true)],
  ['exchange_unavailable', 6, (c) => exchangeDraft(c, false)],
  [
    'change_order_address',
    8,
    (c) => {
      const p = pickOrder(c, (o) => o.status === 'pending');
      if (!p) return undefined;
      const { user, order } = p;
      const who = identify(c, user);
      const which = nameOrder(c, user, order);
      const next = randomAddress(c.rng);
      return {
        template: 'change_order_address',
        description: `Change the shipping address of pending order ${order.order_id}.`,
        steps: [
          {
            user: `${c.rng.pick(['Please ship', 'Could you send', 'Can you redirect'])} ${which.phrase} to ${addressLine(next)} instead? ${who.phrase}`,
            calls: [
              who.call,
              ...which.calls,
              call('modify_pending_order_address', { order_id: order.order_id, ...addr(next) }),
            ],
            answer: `Done: order ${order.order_id} will now ship to ${addressLine(next)}.`,
          },
        ],
        checks: [
          {
            id: 'address-changed',
            kind: 'state',
            server: 'retail',
            path: orderPath(order.order_id, 'address'),
            equals: addr(next),
            weight: 3,
          },
          writes([{ tool: 'modify_pending_order_address', target: order.order_id }]),
          { id: 'answer-address', kind: 'answer', contains: [next.address1], weight: 1 },
        ],
      };
    },
  ],
  [
    'address_refused',
    5,
    (c) => {
      const p = pickOrder(c, (o) => o.status === 'processed' || o.status === 'delivered');
      if (!p) return undefined;
      const { user, order } = p;
      const who = identify(c, user);
      const next = randomAddress(c.rng);
      return {
        template: 'address_refused',
        description: `Refuse to change the address of ${order.status} order ${order.order_id}.`,
        steps: [
          {
            user: `Please change the shipping address of order ${order.order_id} to ${addressLine(next)}. ${who.phrase}`,
            calls: [who.call, call('get_order_details', { order_id: order.order_id })],
            answer: `Order ${order.order_id} is already ${order.status}, so its shipping address cannot be changed; only pending orders can be modified.`,
          },
        ],
        checks: [
          {
            id: 'address-unchanged',
            kind: 'state',
            server: 'retail',
            path: orderPath(order.order_id, 'address'),
            equals: addr(order.address),
            weight: 2,
          },
          writes([], 2),
          refusal(),
        ],
      };
    },
  ],
  [
    'update_default_address',
    7,
    (c) => {
      const user = c.rng.pick(usersOf(c.world));
      const next = randomAddress(c.rng);
      const find = call('find_user_id_by_name_zip', {
        first_name: user.name.first_name,
        last_name: user.name.last_name,
        zip: user.address.zip,
      });
      return {
        template: 'update_default_address',
        description: `Tell ${user.user_id} their default address, then change it.`,
        steps: [
          {
            user: `Hi, I'm ${user.name.first_name} ${user.name.last_name}, zip ${user.address.zip}. What default address do you have on file for me?`,
            calls: [find, call('get_user_details', { user_id: user.user_id })],
            answer: `Your default address is ${addressLine(user.address)}.`,
          },
          {
            user: `${c.rng.pick(['I moved recently.', "That's outdated."])} Please change it to ${addressLine(next)}.`,
            calls: [call('modify_user_address', { user_id: user.user_id, ...addr(next) })],
            answer: `Your default address is now ${addressLine(next)}.`,
          },
        ],
        checks: [
          {
            id: 'answer-old-address',
            kind: 'answer',
            turn: 0,
            contains: [user.address.address1],
            weight: 1,
          },
          {
            id: 'user-address',
            kind: 'state',
            server: 'retail',
            path: `$.users[${JSON.stringify(user.user_id)}].address`,
            equals: addr(next),
            weight: 3,
          },
          {
            id: 'modify-in-turn-2',
            kind: 'call',
            tool: 'modify_user_address',
            turn: 1,
            args: { user_id: { equals: user.user_id } },
            weight: 1,
          },
          writes([{ tool: 'modify_user_address', target: user.user_id }]),
        ],
      };
    },
  ],
  [
    'status_then_cancel',
    7,
    (c) => {
      const users = usersOf(c.world).filter((u) => {
        const os = ordersOf(c.world, u);
        return os.some((o) => o.status === 'pending') && os.length >= 2;
      });
      if (!users.length) return undefined;
      const user = c.rng.pick(users);
      const pending = c.rng.pick(ordersOf(c.world, user).filter((o) => o.status === 'pending'));
      const other = c.rng.pick(
        ordersOf(c.world, user).filter((o) => o.order_id !== pending.order_id),
      );
      const who = identify(c, user);
      return {
        template: 'status_then_cancel',
        description: `Report ${other.order_id}, then cancel ${pending.order_id}.`,
        steps: [
          {
            user: `Hello! ${who.phrase} What's the status of order ${other.order_id}?`,
            calls: [who.call, call('get_order_details', { order_id: other.order_id })],
            answer: `Order ${other.order_id} is ${other.status}.`,
          },
          {
            user: `Thanks. And please cancel order ${pending.order_id}, I ordered it by mistake.`,
            calls: [
              call('get_order_details', { order_id: pending.order_id }),
              call('cancel_pending_order', {
                order_id: pending.order_id,
                reason: 'ordered by mistake',
              }),
            ],
            answer: `Order ${pending.order_id} is cancelled and will be refunded to the original payment method.`,
          },
        ],
        checks: [
          { id: 'answer-status', kind: 'answer', turn: 0, contains: [other.status], weight: 1 },
          {
            id: 'order-cancelled',
            kind: 'state',
            server: 'retail',
            path: orderPath(pending.order_id, 'status'),
            equals: 'cancelled',
            weight: 2,
          },
          {
            id: 'cancel-reason',
            kind: 'state',
            server: 'retail',
            path: orderPath(pending.order_id, 'cancel_reason'),
            equals: 'ordered by mistake',
            weight: 1,
          },
          {
            id: 'other-unchanged',
            kind: 'state',
            server: 'retail',
            path: orderPath(other.order_id, 'status'),
            equals: other.status,
            weight: 1,
          },
          writes([{ tool: 'cancel_pending_order', target: pending.order_id }], 2),
        ],
      };
    },
  ],
  [
    'order_total',
    5,
    (c) => {
      const p = pickOrder(c, () => true);
      if (!p) return undefined;
      const { user, order } = p;
      const who = identify(c, user);
      if (c.rng.chance(0.5)) {
        const count = user.orders.length;
        return {
          template: 'order_count',
          description: `Count the orders of ${user.user_id} (${count}).`,
          steps: [
            {
              user: `${who.phrase} How many orders have I placed with you?`,
              calls: [who.call, call('get_user_details', { user_id: user.user_id })],
              answer: `You have placed ${count} order${count === 1 ? '' : 's'}.`,
            },
          ],
          checks: [
            { id: 'answer-count', kind: 'answer', numbers: [count], weight: 2 },
            {
              id: 'user-read',
              kind: 'call',
              tool: 'get_user_details',
              args: { user_id: { equals: user.user_id } },
              weight: 1,
            },
            writes([]),
          ],
        };
      }
      const total = order.payment_history[0].amount;
      return {
        template: 'order_total',
        description: `Report what ${order.order_id} cost (${total}).`,
        steps: [
          {
            user: `How much did I pay for order ${order.order_id}? ${who.phrase}`,
            calls: [who.call, call('get_order_details', { order_id: order.order_id })],
            answer: `You paid ${money(total)} for order ${order.order_id}.`,
          },
        ],
        checks: [
          { id: 'answer-total', kind: 'answer', numbers: [total], weight: 2 },
          {
            id: 'order-read',
            kind: 'call',
            tool: 'get_order_details',
            args: { order_id: { equals: order.order_id } },
            weight: 1,
          },
          writes([]),
        ],
      };
    },
  ],
];

/** A delivered item and a variant of its product that differs from it in one option. */
interface ExchangeCase {
  user: User;
  order: Order;
  item: OrderItem;
  target: { item_id: string; options: { [d: string]: string }; price: number };
}

/** What the user asks for, in the words a task's user turn says it. */
interface ExchangeAsk {
  /** The option the target differs in (`color`, `size`). */
  dim: string;
  ask: string;
  who: { phrase: string; call: ParsedToolCall };
  lookups: ParsedToolCall[];
}

/** An exchange for another variant: possible (`available`) or refused because it is out of stock. */
function exchangeDraft(c: Ctx, available: boolean): Draft | undefined {
  const options = exchangeCases(c, available);
  if (!options.length) return undefined;
  const ex = c.rng.pick(options);
  const { user, order, item, target } = ex;
  const who = identify(c, user);
  const dim = Object.keys(target.options).find((d) => target.options[d] !== item.options[d])!;
  const want =
    dim === 'color' ? `${target.options[dim]} one` : `one with ${dim} ${target.options[dim]}`;
  const ask = `${c.rng.pick(["I'd like to exchange", 'I want to swap', 'Please exchange'])} the ${itemLabel(item)} from order ${order.order_id} for the ${want}.`;
  const lookups = [
    who.call,
    call('get_order_details', { order_id: order.order_id }),
    call('get_product_details', { product_id: item.product_id }),
  ];
  const asked: ExchangeAsk = { dim, ask, who, lookups };
  return available ? requestedExchange(ex, asked) : refusedExchange(ex, asked);
}

/** Every delivered item with a variant, in stock or not as `available` says, that differs in one option. */
function exchangeCases(c: Ctx, available: boolean): ExchangeCase[] {
  const options: ExchangeCase[] = [];
  for (const user of usersOf(c.world)) {
    for (const order of ordersOf(c.world, user).filter((o) => o.status === 'delivered')) {
      for (const item of order.items) {
        const product = c.world.products[item.product_id];
        for (const v of Object.values(product.variants)) {
          if (v.item_id === item.item_id || v.available !== available) continue;
          const differing = Object.keys(v.options).filter((d) => v.options[d] !== item.options[d]);
          if (differing.length === 1) options.push({ user, order, item, target: v });
        }
      }
    }
  }
  return options;
}

/** The wanted variant is out of stock: the exchange is refused and the order stays delivered. */
function refusedExchange(ex: ExchangeCase, asked: ExchangeAsk): Draft {
  const { order, item, target } = ex;
  const { dim, ask, who, lookups } = asked;
  return {
    template: 'exchange_unavailable',
    description: `Refuse an exchange of ${item.item_id} for unavailable ${target.item_id}.`,
    steps: [
      {
        user: `${ask} ${who.phrase}`,
        calls: lookups,
        answer: `I'm sorry, the ${item.name} with ${dim} ${target.options[dim]} is not available right now, so I cannot exchange it.`,
      },
    ],
    checks: [
      {
        id: 'order-unchanged',
        kind: 'state',
        server: 'retail',
        path: orderPath(order.order_id, 'status'),
        equals: 'delivered',
        weight: 2,
      },
      writes([], 2),
      {
        id: 'answer-unavailable',
        kind: 'answer',
        contains: ['not available', 'unavailable', 'out of stock'],
        mode: 'any',
        weight: 1,
      },
    ],
  };
}

/**
 * The exchange is requested, the price difference settled on the original payment method (or, when
 * that was a gift card, on another method of the user's).
 */
function requestedExchange(ex: ExchangeCase, asked: ExchangeAsk): Draft {
  const { user, order, item, target } = ex;
  const { dim, ask, who, lookups } = asked;
  let method = user.payment_methods[originalPayment(order)];
  const calls = lookups.slice();
  let methodText = 'the original payment method';
  if (method.source === 'gift_card') {
    method = Object.values(user.payment_methods).find((m) => m.source !== 'gift_card')!;
    methodText = `my ${methodPhrase(method)}`;
    calls.push(call('get_user_details', { user_id: user.user_id }));
  }
  calls.push(
    call('exchange_delivered_order_items', {
      order_id: order.order_id,
      item_ids: [item.item_id],
      new_item_ids: [target.item_id],
      payment_method_id: method.id,
    }),
  );
  const diff = cents(target.price - item.price);
  const settle =
    diff > 0
      ? `The price difference of ${money(diff)} is charged to`
      : diff < 0
        ? `The price difference of ${money(-diff)} is refunded to`
        : 'There is no price difference for';
  return {
    template: 'exchange_item',
    description: `Exchange ${item.item_id} for ${target.item_id} in delivered order ${order.order_id}.`,
    steps: [
      {
        user: `${ask} Use ${methodText} for any price difference. ${who.phrase}`,
        calls,
        answer: `Your exchange is requested: the ${itemLabel(item)} for the ${item.name} with ${dim} ${target.options[dim]}. ${settle} your ${methodPhrase(method)}.`,
      },
    ],
    checks: [
      {
        id: 'exchange-requested',
        kind: 'state',
        server: 'retail',
        path: orderPath(order.order_id, 'status'),
        equals: 'exchange requested',
        weight: 2,
      },
      {
        id: 'exchange-new-items',
        kind: 'state',
        server: 'retail',
        path: orderPath(order.order_id, 'exchange_new_items'),
        equals: [target.item_id],
        weight: 2,
      },
      {
        id: 'exchange-items',
        kind: 'state',
        server: 'retail',
        path: orderPath(order.order_id, 'exchange_items'),
        equals: [item.item_id],
        weight: 1,
      },
      writes([{ tool: 'exchange_delivered_order_items', target: order.order_id }]),
      { id: 'answer-exchange', kind: 'answer', contains: ['exchange'], weight: 1 },
    ],
  };
}

/** The retail agent's tools, for the allow-list. */
export const RETAIL_TOOL_NAMES = RETAIL_TOOLS.map((t) => t.name);

/**
 * The retail tools that change the state, for the trajectory items: the exchange's payment method
 * is free (no state check reads it back); returned items may come in any order (the server sorts).
 */
export const RETAIL_WRITE_TOOLS: WriteToolSpec[] = [
  { tool: 'cancel_pending_order', target: 'order_id', collection: 'orders' },
  { tool: 'modify_pending_order_address', target: 'order_id', collection: 'orders' },
  { tool: 'modify_user_address', target: 'user_id', collection: 'users' },
  {
    tool: 'return_delivered_order_items',
    target: 'order_id',
    collection: 'orders',
    unordered: ['item_ids'],
  },
  {
    tool: 'exchange_delivered_order_items',
    target: 'order_id',
    collection: 'orders',
    free: ['payment_method_id'],
  },
];

/** Assembles a task file from a draft. */

/**
 * Retail tasks: the world of the seed (the server's state after `rehearsal__reset({ seed })`) and one
 * of a dozen templates (status, cancel, return, exchange, address changes, totals; refusals where
 * the policy forbids the request; some over two user turns).
 */
export const RETAIL_GENERATOR: TaskGenerator = templatedGenerator({
  domain: 'retail',
  policy: RETAIL_POLICY,
  toolNames: RETAIL_TOOL_NAMES,
  writeTools: RETAIL_WRITE_TOOLS,
  createWorld: createRetailWorld,
  // A refusal template's name says so (cancel_refused, exchange_unavailable, ...).
  templates: TEMPLATES.map(([name, weight, make]) => [
    name,
    weight,
    (c: Ctx) => {
      const d = make(c);
      return (
        d && {
          ...d,
          refusal: d.template.endsWith('_refused') || d.template === 'exchange_unavailable',
        }
      );
    },
  ]),
  salt: { multiply: 7919, add: 104729 },
});
