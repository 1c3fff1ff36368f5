import type { Account } from './world';

/** Why the bank refuses a transfer out of an account: its type (`cd`, `ira`) or its ownership (`joint`). */
export type TransferRestriction = 'cd' | 'ira' | 'joint';

/** The error code of a refused transfer out of a restricted account. */
export const TRANSFER_RESTRICTED = 'TRANSFER_RESTRICTED';

/**
 * The bank's transfer rule: no money is transferred out of a certificate of deposit or a retirement
 * account (the account's `type`), nor out of a joint account (its `ownership`). It is stationary and
 * categorical: it reads those two attributes of the source account, which `get_account` shows, and
 * nothing else, the same for every world and seed. The default world has only checking and savings
 * accounts with no `ownership`, so it refuses nothing there and no default task changes; the
 * foresight world (`foresightWorld.ts`) is where it decides.
 */
export function transferRestriction(from: Account): TransferRestriction | undefined {
  if (from.type === 'cd' || from.type === 'ira') return from.type;
  if (from.ownership === 'joint') return 'joint';
  return undefined;
}

/** The reason a refusal gives, after the account's id: what the account is and what that forbids. */
export const RESTRICTION_REASONS: Record<TransferRestriction, string> = {
  cd: 'is a certificate of deposit, and money cannot be moved out of a CD before it matures',
  ira: 'is a retirement account (IRA), and transfers out of a retirement account are not allowed',
  joint: 'is a joint account, and transfers out of a joint account need both owners at a branch',
};
