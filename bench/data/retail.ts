import type { JsonObject, JsonValue } from '../../src/core/base/json';

import { seededRandom } from '../../src/core/policy/sampling/sampling';

const FIRST = [
  'mia',
  'noah',
  'olivia',
  'liam',
  'ava',
  'ethan',
  'sofia',
  'lucas',
  'yusuf',
  'chen',
  'amara',
  'jonas',
];
const LAST = [
  'garcia',
  'kim',
  'smith',
  'nguyen',
  'müller',
  'rossi',
  'silva',
  'khan',
  'ito',
  'dubois',
];
const PRODUCTS = [
  'Desk Lamp',
  'Water Bottle',
  'Running Shoes',
  'Backpack',
  'Bluetooth Speaker',
  'Coffee Maker',
  'Yoga Mat',
  'Office Chair',
  'Tea Kettle',
  'Wireless Earbuds',
];
const COLORS = ['black', 'white', 'red', 'blue', 'green', 'silver'];
const STATUSES = ['pending', 'processed', 'delivered', 'cancelled', 'return requested'];
const CITIES = [
  ['Austin', 'TX', '78701'],
  ['Denver', 'CO', '80202'],
  ['Seattle', 'WA', '98101'],
  ['Boston', 'MA', '02108'],
  ['Chicago', 'IL', '60601'],
];

/**
 * A tau-bench-like retail tool response of about `bytes` bytes: users with addresses, payment methods
 * and orders of items with options, prices and fulfilments.
 */
export function retailDocument(bytes: number, seed = 42): JsonObject {
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const users: JsonValue[] = [];
  let size = 0;
  for (let u = 0; size < bytes; u++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const [city, state, zip] = pick(CITIES);
    const orders: JsonValue[] = [];
    const orderCount = 1 + Math.floor(rand() * 4);
    for (let o = 0; o < orderCount; o++) {
      const items: JsonValue[] = [];
      const itemCount = 1 + Math.floor(rand() * 4);
      for (let i = 0; i < itemCount; i++) {
        items.push({
          item_id: String(1000000000 + Math.floor(rand() * 8999999999)),
          product_id: String(100000 + Math.floor(rand() * 899999)),
          name: pick(PRODUCTS),
          price: Math.round(rand() * 50000) / 100,
          options: { color: pick(COLORS), size: pick(['S', 'M', 'L', 'XL']) },
        });
      }
      const status = pick(STATUSES);
      orders.push({
        order_id: `#W${String(1000000 + u * 10 + o)}`,
        status,
        items,
        fulfillments:
          status === 'delivered'
            ? [
                {
                  tracking_id: [String(Math.floor(rand() * 1e12))],
                  item_ids: items.map((i) => (i as JsonObject).item_id),
                },
              ]
            : [],
        payment_history: [
          {
            transaction_type: 'payment',
            amount: Math.round(rand() * 100000) / 100,
            payment_method_id: `credit_card_${u}`,
          },
        ],
      });
    }
    const paymentMethods: JsonObject = {
      [`credit_card_${u}`]: {
        source: 'credit_card',
        brand: pick(['visa', 'mastercard']),
        last_four: String(1000 + (u % 9000)),
      },
      [`gift_card_${u}`]: { source: 'gift_card', balance: Math.round(rand() * 20000) / 100 },
    };
    const user: JsonObject = {
      user_id: `${first}_${last}_${1000 + u}`,
      name: { first_name: first, last_name: last },
      email: `${first}.${last}${u}@example.com`,
      address: {
        address1: `${100 + u} Main Street`,
        address2: rand() < 0.3 ? `Suite ${u % 900}` : '',
        city,
        state,
        country: 'USA',
        zip,
      },
      payment_methods: paymentMethods,
      orders,
    };
    size += JSON.stringify(user).length + 1;
    users.push(user);
  }
  return { users, page: 1, total_users: users.length };
}

/**
 * A copy of `doc` as a rehearsal would get it wrong: about `rate` of the orders get another status,
 * a price written as a string, a missing or an invented field, or an extra item.
 */
export function perturb(doc: JsonObject, rate = 0.05, seed = 7): JsonObject {
  const rand = seededRandom(seed);
  const copy = JSON.parse(JSON.stringify(doc)) as JsonObject;
  for (const user of copy.users as JsonObject[]) {
    for (const order of user.orders as JsonObject[]) {
      if (rand() >= rate) continue;
      const items = order.items as JsonObject[];
      switch (Math.floor(rand() * 5)) {
        case 0:
          order.status = order.status === 'pending' ? 'delivered' : 'pending';
          break;
        case 1:
          items[0].price = String(items[0].price);
          break;
        case 2:
          delete order.payment_history;
          break;
        case 3:
          order.estimated_delivery = '2026-12-03';
          break;
        default:
          items.push({ ...items[0], item_id: '9999999999' });
          break;
      }
    }
  }
  return copy;
}
