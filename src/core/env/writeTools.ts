/**
 * Verbs that name a tool that only reads (`get_order_details`, `findCustomer`, `list_payees`), as
 * the first word of its name in snake, kebab or camel case.
 */
export const READ_VERBS = [
  'get',
  'find',
  'list',
  'search',
  'lookup',
  'read',
  'query',
  'view',
  'show',
  'fetch',
  'describe',
  'count',
] as const;

/** Whole tool names that only read: tau-bench's scratch tools. */
const READ_NAMES = new Set(['calculate', 'think']);

const SNAKE_READ = new RegExp(`^(?:${READ_VERBS.join('|')})(?:[^a-z]|$)`);
const CAMEL_READ = new RegExp(`^(?:${READ_VERBS.join('|')})[A-Z]`);

/** True when a tool's name reads like a read: its first word is one of {@link READ_VERBS}. */
export function namedLikeRead(name: string): boolean {
  const lowered = name.toLowerCase();
  if (READ_NAMES.has(lowered) || SNAKE_READ.test(lowered)) return true;
  return CAMEL_READ.test(name.charAt(0).toLowerCase() + name.slice(1));
}

/**
 * True when a call of this tool may change the world (a write): where its server gave MCP's
 * `readOnlyHint` (`hints`, from `Environment.readOnlyHints`; the built-in domains give it to
 * every tool), that hint decides; a tool without it is a write unless it is named like a read
 * ({@link namedLikeRead}). An unknown tool the policy invented is judged by its name alike.
 */
export function isWriteTool(name: string, hints?: ReadonlyMap<string, boolean>): boolean {
  const hint = hints?.get(name);
  return hint !== undefined ? !hint : !namedLikeRead(name);
}
