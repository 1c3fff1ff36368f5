/**
 * The fidelity comparison panel's protocol (see `base/panelProtocol.ts`), apart from the schema
 * that validates it (`compareView.ts`), so that the page's bundle carries no validator.
 */
import { notification, readyNotification, snapshotNotification } from '../../base/panelProtocol';
import type { CompareMessage, CompareSnapshot } from './compareView';

/** The comparison panel's protocol: `ready`, snapshots and what it drew (it asks nothing). */
export const compareProtocol = {
  ready: readyNotification,
  snapshot: snapshotNotification<CompareSnapshot>(),
  rendered: notification<Omit<Extract<CompareMessage, { type: 'rendered' }>, 'type'>>('rendered'),
};
