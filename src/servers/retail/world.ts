import { Random } from '../common/random';
import { CITIES, FIRST_NAMES, LAST_NAMES, STREETS } from '../common/people';
import { PRODUCT_TEMPLATES } from './catalog';

/** A postal address. */
export interface Address {
  address1: string;
  address2: string;
  city: string;
  state: string;
  country: string;
  zip: string;
}

/** A way to pay: credit card, gift card (with a balance) or PayPal. */
export interface PaymentMethod {
  id: string;
  source: 'credit_card' | 'gift_card' | 'paypal';
  brand?: string;
  last_four?: string;
  balance?: number;
}

/** One variant of a product (a color and size...). */
export interface Variant {
  item_id: string;
  options: { [dimension: string]: string };
  price: number;
  available: boolean;
}

/** A product type with its variants. */
export interface Product {
  product_id: string;
  name: string;
  variants: { [itemId: string]: Variant };
}

/** A customer. */
export interface User {
  user_id: string;
  name: { first_name: string; last_name: string };
  email: string;
  address: Address;
  payment_methods: { [id: string]: PaymentMethod };
  orders: string[];
}

/** One item of an order. */
export interface OrderItem {
  item_id: string;
  product_id: string;
  name: string;
  options: { [dimension: string]: string };
  price: number;
}

/** A payment or a refund on an order. */
export interface Payment {
  transaction_type: 'payment' | 'refund';
  amount: number;
  payment_method_id: string;
}

/** Order statuses. `pending` orders can still be changed; `delivered` ones returned or exchanged. */
export type OrderStatus =
  'pending' | 'processed' | 'delivered' | 'cancelled' | 'return requested' | 'exchange requested';

/** An order. */
export interface Order {
  order_id: string;
  user_id: string;
  created_at: string;
  address: Address;
  items: OrderItem[];
  status: OrderStatus;
  payment_history: Payment[];
  fulfillments: { tracking_id: string; item_ids: string[] }[];
  cancel_reason?: string;
  return_items?: string[];
  return_payment_method_id?: string;
  exchange_items?: string[];
  exchange_new_items?: string[];
  exchange_payment_method_id?: string;
  exchange_price_difference?: number;
}

/** The whole retail world. */
export interface RetailState {
  products: { [productId: string]: Product };
  users: { [userId: string]: User };
  orders: { [orderId: string]: Order };
}

/** Rounds to cents. */
export function cents(x: number): number {
  return Math.round(x * 100) / 100;
}

/** The combinations of a product's option dimensions. */
function combinations(options: { [d: string]: readonly string[] }): { [d: string]: string }[] {
  let out: { [d: string]: string }[] = [{}];
  for (const [dim, values] of Object.entries(options)) {
    out = out.flatMap((o) => values.map((v) => ({ ...o, [dim]: v })));
  }
  return out;
}

class Ids {
  private readonly used = new Set<string>();
  constructor(private readonly rng: Random) {}
  make(prefix: string, digits: number): string {
    for (;;) {
      const id = prefix + this.rng.digits(digits);
      if (!this.used.has(id)) {
        this.used.add(id);
        return id;
      }
    }
  }
}

/** `n` distinct (first name, last name) pairs. */
export function distinctNames(rng: Random, n: number): [string, string][] {
  const seen = new Set<string>();
  const out: [string, string][] = [];
  while (out.length < n) {
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    if (seen.has(first) || seen.has(last)) continue; // distinct first and last names keep users easy to tell apart
    seen.add(first);
    seen.add(last);
    out.push([first, last]);
  }
  return out;
}

/** A random address. */
export function randomAddress(rng: Random): Address {
  const [city, state, zipPrefix] = rng.pick(CITIES);
  return {
    address1: `${rng.int(10, 9899)} ${rng.pick(STREETS)}`,
    address2: rng.chance(0.35) ? `Suite ${rng.int(100, 999)}` : '',
    city,
    state,
    country: 'USA',
    zip: zipPrefix + String(rng.int(10, 99)),
  };
}

/**
 * The retail world of a seed: ten product types with their variants, about a dozen users with
 * payment methods, and their orders in every status.
 */
export function createRetailWorld(seed: number): RetailState {
  const rng = new Random(seed);
  const ids = new Ids(rng);
  const products = stockProducts(rng, ids);
  const productList = Object.values(products);

  const users: RetailState['users'] = {};
  const orders: RetailState['orders'] = {};
  for (const [first, last] of distinctNames(rng, rng.int(10, 14))) {
    const user = newUser(rng, ids, first, last);
    const orderCount = rng.int(1, 4);
    for (let k = 0; k < orderCount; k++) {
      const order = placeOrder(rng, ids, user, productList);
      orders[order.order_id] = order;
      user.orders.push(order.order_id);
    }
    users[user.user_id] = user;
  }
  return { products, users, orders };
}

/** The products: each template with five to nine of its option combinations as variants, most available. */
function stockProducts(rng: Random, ids: Ids): RetailState['products'] {
  const products: RetailState['products'] = {};
  for (const t of PRODUCT_TEMPLATES) {
    const product: Product = { product_id: ids.make('', 10), name: t.name, variants: {} };
    const all = combinations(t.options);
    const combos = rng.sample(all, Math.min(rng.int(5, 9), all.length));
    for (const options of combos) {
      const itemId = ids.make('', 10);
      product.variants[itemId] = {
        item_id: itemId,
        options,
        price: cents(t.basePrice * (0.85 + rng.next() * 0.3)),
        available: rng.chance(0.75),
      };
    }
    products[product.product_id] = product;
  }
  return products;
}

/** A user with one to three payment methods (always a credit card or PayPal among them) and no orders yet. */
function newUser(rng: Random, ids: Ids, first: string, last: string): User {
  const userId = `${first.toLowerCase()}_${last.toLowerCase()}_${rng.digits(4)}`;
  const payment_methods: User['payment_methods'] = {};
  const kinds = rng.sample(['credit_card', 'gift_card', 'paypal'] as const, rng.int(1, 3));
  if (!kinds.includes('credit_card') && !kinds.includes('paypal')) kinds.push('credit_card');
  for (const source of kinds) {
    const id = ids.make(`${source}_`, 7);
    payment_methods[id] =
      source === 'credit_card'
        ? {
            id,
            source,
            brand: rng.pick(['visa', 'mastercard', 'amex']),
            last_four: rng.digits(4),
          }
        : source === 'gift_card'
          ? { id, source, balance: rng.int(0, 300) }
          : { id, source };
  }
  return {
    user_id: userId,
    name: { first_name: first, last_name: last },
    email: `${first.toLowerCase()}.${last.toLowerCase()}${rng.int(1, 99)}@example.com`,
    address: randomAddress(rng),
    payment_methods,
    orders: [],
  };
}

/**
 * One of the user's orders: one to three items, a status (pending, processed, delivered or
 * cancelled), paid by a method that covers it, refunded when cancelled.
 */
function placeOrder(rng: Random, ids: Ids, user: User, productList: Product[]): Order {
  const userId = user.user_id;
  const payment_methods = user.payment_methods;
  const orderId = ids.make('#W', 7);
  const picked = rng.sample(productList, rng.int(1, 3));
  const items: OrderItem[] = picked.map((p) => {
    const v = rng.pick(Object.values(p.variants));
    return {
      item_id: v.item_id,
      product_id: p.product_id,
      name: p.name,
      options: { ...v.options },
      price: v.price,
    };
  });
  const status = rng.weighted<OrderStatus>([
    ['pending', 30],
    ['processed', 12],
    ['delivered', 45],
    ['cancelled', 8],
  ]);
  const total = cents(items.reduce((s, i) => s + i.price, 0));
  const payer = rng.pick(
    Object.values(payment_methods)
      .filter((m) => m.source !== 'gift_card' || (m.balance ?? 0) >= total)
      .map((m) => m.id),
  );
  const order: Order = {
    order_id: orderId,
    user_id: userId,
    created_at: `2025-${String(rng.int(1, 5)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`,
    address: rng.chance(0.85) ? { ...user.address } : randomAddress(rng),
    items,
    status,
    payment_history: [{ transaction_type: 'payment', amount: total, payment_method_id: payer }],
    fulfillments:
      status === 'processed' || status === 'delivered'
        ? [{ tracking_id: rng.digits(12), item_ids: items.map((i) => i.item_id) }]
        : [],
  };
  if (status === 'cancelled') {
    order.cancel_reason = rng.pick(['no longer needed', 'ordered by mistake']);
    order.payment_history.push({
      transaction_type: 'refund',
      amount: total,
      payment_method_id: payer,
    });
  }
  return order;
}
