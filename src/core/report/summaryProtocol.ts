/**
 * The run summary panel's protocol (see `base/panelProtocol.ts`), apart from the schema that
 * validates it (`runSummary.ts`), so that the page's bundle carries no validator.
 */
import {
  notification,
  readyNotification,
  request,
  snapshotNotification,
} from '../base/panelProtocol';
import type { RunSummarySnapshot, SummaryMessage, SummaryRequest } from './runSummary';

/** The run summary panel's protocol: `ready`, snapshots, what it drew, and opening an episode's Trajectory. */
export const summaryProtocol = {
  ready: readyNotification,
  snapshot: snapshotNotification<RunSummarySnapshot>(),
  rendered: notification<Omit<Extract<SummaryMessage, { type: 'rendered' }>, 'type'>>('rendered'),
  openEpisode: request<Omit<SummaryRequest, 'method'>>('openEpisode'),
};
