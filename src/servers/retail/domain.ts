import type { Domain } from '../common/domain';
import type { JsonObject } from '../../core/base/json';
import { RETAIL_TOOLS } from './tools';
import type { RetailState } from './world';
import { createRetailWorld } from './world';

/** The retail domain: users, orders, products, payment methods. */
export const RETAIL_DOMAIN: Domain<RetailState> = {
  name: 'retail',
  version: '1.0.0',
  createState: createRetailWorld,
  snapshot: (s) => JSON.parse(JSON.stringify(s)) as JsonObject,
  tools: RETAIL_TOOLS,
};
