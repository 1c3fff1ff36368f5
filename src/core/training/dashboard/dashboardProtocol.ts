/**
 * The training dashboard's protocol (see `base/panelProtocol.ts`), apart from the schema that
 * validates it (`protocol.ts`), so that the page's bundle carries no validator.
 */
import type { RequestType } from '../../base/panelProtocol';
import {
  notification,
  readyNotification,
  request,
  snapshotNotification,
} from '../../base/panelProtocol';
import type { DashboardMessage, DashboardRequest, TrainingDashboardSnapshot } from './protocol';

/** A button's request: it runs a command that may ask the person (a confirmation, a pick), so it waits as long as that takes. */
type ButtonRequest = RequestType<Record<never, never>, void>;

const button = (method: DashboardRequest['method']): ButtonRequest =>
  request<Record<never, never>>(method, { timeoutMs: 0 });

/** The dashboard's protocol: `ready`, snapshots, what it drew, and a request per button. */
export const dashboardProtocol = {
  ready: readyNotification,
  snapshot: snapshotNotification<TrainingDashboardSnapshot>(),
  rendered: notification<Omit<Extract<DashboardMessage, { type: 'rendered' }>, 'type'>>('rendered'),
  cancel: button('cancel'),
  resume: button('resume'),
  usePolicy: button('usePolicy'),
  compare: button('compare'),
  showLog: button('showLog'),
} satisfies Record<DashboardRequest['method'], ButtonRequest> & Record<string, unknown>;
