/**
 * The Compare Runs panel's protocol (see `base/panelProtocol.ts`), apart from the schema that
 * validates it (`compareRuns.ts`), so that the page's bundle carries no validator.
 */
import {
  notification,
  readyNotification,
  request,
  snapshotNotification,
} from '../base/panelProtocol';
import type { RunComparison, RunsMessage, RunsRequest } from './compareRuns';

/**
 * The Compare Runs panel's protocol: `ready`, snapshots, what it drew, opening a call's two diffs,
 * and a task's two Trajectories.
 */
export const runsProtocol = {
  ready: readyNotification,
  snapshot: snapshotNotification<RunComparison>(),
  rendered: notification<Omit<Extract<RunsMessage, { type: 'rendered' }>, 'type'>>('rendered'),
  openPair: request<Omit<Extract<RunsRequest, { method: 'openPair' }>, 'method'>>('openPair'),
  openTask: request<Omit<Extract<RunsRequest, { method: 'openTask' }>, 'method'>>('openTask'),
};
