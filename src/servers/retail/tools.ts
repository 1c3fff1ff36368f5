import { z } from 'zod';
import type { JsonObject } from '../../core/base/json';
import type { DomainTool } from '../common/domain';
import { PolicyError } from '../common/domain';
import type { Address, Order, RetailState } from './world';
import { cents } from './world';

type Tool = DomainTool<RetailState>;

const json = (v: unknown): JsonObject => JSON.parse(JSON.stringify(v)) as JsonObject;

function order(state: RetailState, id: unknown): Order {
  const o = state.orders[String(id)];
  if (!o) throw new PolicyError('ORDER_NOT_FOUND', `Order not found: ${String(id)}`);
  return o;
}

function requireStatus(o: Order, status: Order['status'], action: string): void {
  if (o.status !== status)
    throw new PolicyError(
      `ORDER_NOT_${status.toUpperCase().replace(/ /g, '_')}`,
      `Only ${status} orders can be ${action}; order ${o.order_id} is ${o.status}.`,
    );
}

const addressShape = {
  address1: z.string().min(1).describe('Street address, e.g. "123 Maple Street"'),
  address2: z.string().describe('Apartment or suite, or an empty string'),
  city: z.string().min(1),
  state: z.string().min(2).describe('Two-letter state code'),
  country: z.string().min(1),
  zip: z
    .string()
    .regex(/^\d{5}$/)
    .describe('Five-digit zip code'),
};

function addressOf(args: Record<string, unknown>): Address {
  return {
    address1: String(args['address1']),
    address2: String(args['address2']),
    city: String(args['city']),
    state: String(args['state']),
    country: String(args['country']),
    zip: String(args['zip']),
  };
}

function ownedItems(o: Order, itemIds: string[], action: string): void {
  const remaining = o.items.map((i) => i.item_id);
  for (const id of itemIds) {
    const at = remaining.indexOf(id);
    if (at < 0)
      throw new PolicyError(
        'ITEM_NOT_IN_ORDER',
        `Item ${id} is not in order ${o.order_id} (or is listed more often than ordered); cannot ${action} it.`,
      );
    remaining.splice(at, 1);
  }
}

/** The retail domain's tools. */
export const RETAIL_TOOLS: Tool[] = [
  {
    name: 'find_user_id_by_email',
    description: 'Find a user id by email address.',
    input: { email: z.string().describe('The email address, e.g. emma.kim12@example.com') },
    run: (s, a) => {
      const email = String(a['email']).trim().toLowerCase();
      const u = Object.values(s.users).find((x) => x.email === email);
      if (!u) throw new PolicyError('USER_NOT_FOUND', `No user with email ${email}.`);
      return { user_id: u.user_id };
    },
  },
  {
    name: 'find_user_id_by_name_zip',
    description: 'Find a user id by first name, last name and zip code.',
    input: { first_name: z.string(), last_name: z.string(), zip: z.string() },
    run: (s, a) => {
      const f = String(a['first_name']).trim().toLowerCase();
      const l = String(a['last_name']).trim().toLowerCase();
      const zip = String(a['zip']).trim();
      const u = Object.values(s.users).find(
        (x) =>
          x.name.first_name.toLowerCase() === f &&
          x.name.last_name.toLowerCase() === l &&
          x.address.zip === zip,
      );
      if (!u)
        throw new PolicyError(
          'USER_NOT_FOUND',
          `No user named ${a['first_name']} ${a['last_name']} with zip ${zip}.`,
        );
      return { user_id: u.user_id };
    },
  },
  {
    name: 'get_user_details',
    description:
      "Get a user's profile: name, email, default address, payment methods and order ids.",
    input: { user_id: z.string() },
    run: (s, a) => {
      const u = s.users[String(a['user_id'])];
      if (!u) throw new PolicyError('USER_NOT_FOUND', `User not found: ${a['user_id']}`);
      return json(u);
    },
  },
  {
    name: 'get_order_details',
    description:
      'Get an order: status, items (with item ids and prices), shipping address, payments and fulfillments.',
    input: { order_id: z.string().describe('The order id, starting with #W, e.g. #W1234567') },
    run: (s, a) => json(order(s, a['order_id'])),
  },
  {
    name: 'list_all_product_types',
    description: 'List every product type the store sells, with its product id.',
    input: {},
    run: (s) => ({
      products: Object.fromEntries(
        Object.values(s.products)
          .map((p) => [p.name, p.product_id])
          .sort(),
      ),
    }),
  },
  {
    name: 'get_product_details',
    description:
      'Get a product type with all its variants: item id, options, price, and whether it is available.',
    input: { product_id: z.string() },
    run: (s, a) => {
      const p = s.products[String(a['product_id'])];
      if (!p) throw new PolicyError('PRODUCT_NOT_FOUND', `Product not found: ${a['product_id']}`);
      return json(p);
    },
  },
  {
    name: 'cancel_pending_order',
    description:
      'Cancel a pending order. The payment is refunded to the original payment method. Only pending orders can be cancelled.',
    input: { order_id: z.string(), reason: z.enum(['no longer needed', 'ordered by mistake']) },
    target: (a) => String(a['order_id']),
    run: (s, a) => {
      const o = order(s, a['order_id']);
      requireStatus(o, 'pending', 'cancelled');
      o.status = 'cancelled';
      o.cancel_reason = String(a['reason']);
      for (const p of o.payment_history.filter((x) => x.transaction_type === 'payment')) {
        o.payment_history.push({
          transaction_type: 'refund',
          amount: p.amount,
          payment_method_id: p.payment_method_id,
        });
        const m = s.users[o.user_id].payment_methods[p.payment_method_id];
        if (m?.source === 'gift_card') m.balance = cents((m.balance ?? 0) + p.amount);
      }
      return json(o);
    },
  },
  {
    name: 'modify_pending_order_address',
    description: 'Change the shipping address of a pending order.',
    input: { order_id: z.string(), ...addressShape },
    target: (a) => String(a['order_id']),
    run: (s, a) => {
      const o = order(s, a['order_id']);
      requireStatus(o, 'pending', 'modified');
      o.address = addressOf(a);
      return json(o);
    },
  },
  {
    name: 'modify_user_address',
    description: "Change a user's default address (existing orders keep theirs).",
    input: { user_id: z.string(), ...addressShape },
    target: (a) => String(a['user_id']),
    run: (s, a) => {
      const u = s.users[String(a['user_id'])];
      if (!u) throw new PolicyError('USER_NOT_FOUND', `User not found: ${a['user_id']}`);
      u.address = addressOf(a);
      return json(u);
    },
  },
  {
    name: 'return_delivered_order_items',
    description:
      "Request a return of items of a delivered order. The refund goes to the original payment method or to one of the user's gift cards.",
    input: {
      order_id: z.string(),
      item_ids: z.array(z.string()).min(1),
      payment_method_id: z.string(),
    },
    target: (a) => String(a['order_id']),
    run: (s, a) => {
      const o = order(s, a['order_id']);
      requireStatus(o, 'delivered', 'returned');
      const itemIds = (a['item_ids'] as string[]).slice();
      ownedItems(o, itemIds, 'return');
      const methodId = String(a['payment_method_id']);
      const method = s.users[o.user_id].payment_methods[methodId];
      const original = o.payment_history.some(
        (p) => p.transaction_type === 'payment' && p.payment_method_id === methodId,
      );
      if (!method || (!original && method.source !== 'gift_card')) {
        throw new PolicyError(
          'INVALID_REFUND_METHOD',
          `Refunds go to the original payment method or to a gift card of the user; ${methodId} is neither.`,
        );
      }
      o.status = 'return requested';
      o.return_items = itemIds.sort();
      o.return_payment_method_id = methodId;
      return json(o);
    },
  },
  {
    name: 'exchange_delivered_order_items',
    description:
      'Exchange items of a delivered order for other available variants of the same products. The price difference is charged to, or refunded to, the given payment method.',
    input: {
      order_id: z.string(),
      item_ids: z.array(z.string()).min(1),
      new_item_ids: z.array(z.string()).min(1),
      payment_method_id: z.string(),
    },
    target: (a) => String(a['order_id']),
    run: (s, a) => {
      const o = order(s, a['order_id']);
      requireStatus(o, 'delivered', 'exchanged');
      const itemIds = a['item_ids'] as string[];
      const newIds = a['new_item_ids'] as string[];
      if (itemIds.length !== newIds.length)
        throw new PolicyError(
          'EXCHANGE_MISMATCH',
          'item_ids and new_item_ids must have the same length.',
        );
      ownedItems(o, itemIds, 'exchange');
      let difference = 0;
      itemIds.forEach((oldId, i) => {
        const old = o.items.find((x) => x.item_id === oldId)!;
        const product = s.products[old.product_id];
        const next = product.variants[newIds[i]];
        if (!next)
          throw new PolicyError(
            'ITEM_NOT_IN_PRODUCT',
            `Item ${newIds[i]} is not a variant of ${product.name}; items can only be exchanged for the same product.`,
          );
        if (next.item_id === old.item_id)
          throw new PolicyError('SAME_ITEM', `Item ${old.item_id} cannot be exchanged for itself.`);
        if (!next.available)
          throw new PolicyError(
            'ITEM_NOT_AVAILABLE',
            `Item ${next.item_id} (${product.name}, ${Object.values(next.options).join(', ')}) is not available.`,
          );
        difference += next.price - old.price;
      });
      const methodId = String(a['payment_method_id']);
      const method = s.users[o.user_id].payment_methods[methodId];
      if (!method)
        throw new PolicyError(
          'PAYMENT_METHOD_NOT_FOUND',
          `Payment method ${methodId} does not belong to the user.`,
        );
      difference = cents(difference);
      if (method.source === 'gift_card' && difference > (method.balance ?? 0)) {
        throw new PolicyError(
          'INSUFFICIENT_GIFT_CARD_BALANCE',
          `The gift card balance (${method.balance}) does not cover the price difference (${difference}).`,
        );
      }
      o.status = 'exchange requested';
      o.exchange_items = itemIds.slice().sort();
      o.exchange_new_items = newIds.slice().sort();
      o.exchange_payment_method_id = methodId;
      o.exchange_price_difference = difference;
      return json(o);
    },
  },
];
