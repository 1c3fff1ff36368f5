/**
 * The messages between the Trajectory panel (webview/trajectory) and its host (the extension),
 * in one module both sides import. The host posts whole snapshots; the panel sends a `ready`
 * notification and requests (with ids) that the host answers. The host validates every message
 * it receives with {@link parsePanelMessage}: a webview is untrusted input.
 */
import { z } from 'zod';
import { ANNOTATION_KINDS, ANNOTATION_SEVERITIES } from '../annotations/schema';
import {
  panelMessageParser,
  readyMessageSchema,
  requestMessageSchema,
} from '../base/panelMessages';
import type { ResponseEnvelope } from '../base/panelProtocol';
import type { TrajectorySnapshot } from './snapshot';

const id = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/);

const requestSchema = z.discriminatedUnion('method', [
  z.object({
    method: z.literal('mark'),
    callId: id,
    kind: z.enum(ANNOTATION_KINDS),
    severity: z.enum(ANNOTATION_SEVERITIES),
    path: z.string().startsWith('$').max(4096).optional(),
    note: z.string().max(20000).optional(),
  }),
  z.object({ method: z.literal('accept'), callId: id, note: z.string().max(20000).optional() }),
  z.object({ method: z.literal('delete'), annotationId: id }),
  z.object({ method: z.literal('openDiff'), callId: id }),
  z.object({ method: z.literal('openEpisode'), episodeId: id, callId: id.optional() }),
]);

const panelMessageSchema = z.discriminatedUnion('type', [
  readyMessageSchema,
  requestMessageSchema(requestSchema),
]);

/**
 * A request of the panel: mark a call (or path), accept a rehearsal, delete an annotation, open the
 * native diff, open another episode of the run (an imagined attempt of the memory) in its own panel.
 */
export type PanelRequest = z.infer<typeof requestSchema>;

/** What the panel sends to the host. */
export type PanelMessage = z.infer<typeof panelMessageSchema>;

/** What the host sends to the panel. */
export type HostMessage = { type: 'snapshot'; snapshot: TrajectorySnapshot } | ResponseEnvelope;

/** A panel message, if `value` is one; undefined for anything else. */
export const parsePanelMessage: (value: unknown) => PanelMessage | undefined =
  panelMessageParser(panelMessageSchema);

/** The view state the panel keeps with `setState` (and the serializer restores): which episode it shows. */
export interface TrajectoryViewState {
  file: string;
  episodeId: string;
  scrollY?: number;
}

/** True for a view state a restored panel can use. */
export function isTrajectoryViewState(value: unknown): value is TrajectoryViewState {
  const v = value as Partial<TrajectoryViewState> | null;
  return (
    !!v &&
    typeof v.file === 'string' &&
    typeof v.episodeId === 'string' &&
    id.safeParse(v.episodeId).success
  );
}
