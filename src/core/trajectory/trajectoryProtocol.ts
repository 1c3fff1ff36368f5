/**
 * The Trajectory panel's protocol (see `base/panelProtocol.ts`), apart from the schemas that validate
 * it (`protocol.ts`), so that the page's bundle carries no validator.
 */
import { readyNotification, request, snapshotNotification } from '../base/panelProtocol';
import type { PanelRequest } from './protocol';
import type { TrajectorySnapshot } from './snapshot';

/** The params of one of the panel's requests (the request without its method). */
export type TrajectoryRequestParams<M extends PanelRequest['method']> = Omit<
  Extract<PanelRequest, { method: M }>,
  'method'
>;

/** The Trajectory panel's protocol: the page's `ready`, the host's snapshots, and the page's requests (answered when done). */
export const trajectoryProtocol = {
  ready: readyNotification,
  snapshot: snapshotNotification<TrajectorySnapshot>(),
  mark: request<TrajectoryRequestParams<'mark'>>('mark'),
  accept: request<TrajectoryRequestParams<'accept'>>('accept'),
  delete: request<TrajectoryRequestParams<'delete'>>('delete'),
  openDiff: request<TrajectoryRequestParams<'openDiff'>>('openDiff'),
  openEpisode: request<TrajectoryRequestParams<'openEpisode'>>('openEpisode'),
};
