/**
 * The messages between the training dashboard (webview/training) and its host, in one module both
 * sides import. The host posts whole snapshots of the run; the dashboard sends `ready`, requests
 * (with ids) for its buttons, and `rendered` after drawing a snapshot (how many points each chart
 * holds: what a person sees, for the editor tests). The host validates every message it receives.
 */
import { z } from 'zod';
import {
  panelMessageParser,
  readyMessageSchema,
  requestMessageSchema,
} from '../../base/panelMessages';
import type { ResponseEnvelope } from '../../base/panelProtocol';
import type { TrainingChartId, TrainingRunState } from './runState';
import { TRAINING_CHARTS, thinSeries } from './runState';

/** What a button of the dashboard asks for. */
export const DASHBOARD_METHODS = ['cancel', 'resume', 'usePolicy', 'compare', 'showLog'] as const;

const dashboardMessageSchema = z.discriminatedUnion('type', [
  readyMessageSchema,
  requestMessageSchema(z.object({ method: z.enum(DASHBOARD_METHODS) })),
  z.object({
    type: z.literal('rendered'),
    points: z.partialRecord(z.enum(TRAINING_CHARTS), z.number().int().nonnegative()),
  }),
]);

/** A request of the dashboard. */
export type DashboardRequest = { method: (typeof DASHBOARD_METHODS)[number] };

/** What the dashboard sends to the host. */
export type DashboardMessage = z.infer<typeof dashboardMessageSchema>;

/** Which of the dashboard's actions apply now. */
export interface DashboardActions {
  cancel: boolean;
  resume: boolean;
  usePolicy: boolean;
  compare: boolean;
}

/** The whole state of one run as the dashboard draws it. */
export interface TrainingDashboardSnapshot {
  /** The run's name (its folder's name). */
  name: string;
  outDir: string;
  /** The run file it was launched from, when known. */
  runFile?: string;
  /** The exact command that runs (or ran) the trainer. */
  command?: string;
  /** A process started by this editor is running it. */
  attached: boolean;
  state: Omit<TrainingRunState, 'pace'>;
  /** The exported model folder, once the run is done and exported; what "Use as policy" selects. */
  model?: string;
  /** What happens after the run: the ONNX export of its final model. */
  afterRun?: { phase: 'exporting' | 'exported' | 'failed'; message?: string };
  /** The last lines of the trainer's log, when it failed. */
  logTail?: string;
  actions: DashboardActions;
}

/** What the host sends to the dashboard. */
export type DashboardHostMessage =
  { type: 'snapshot'; snapshot: TrainingDashboardSnapshot } | ResponseEnvelope;

/** A dashboard message, if `value` is one; undefined for anything else. */
export const parseDashboardMessage: (value: unknown) => DashboardMessage | undefined =
  panelMessageParser(dashboardMessageSchema);

/** The most points a chart's series carries to the webview (a long run is thinned for drawing). */
export const MAX_POINTS_PER_SERIES = 1000;

/** The run's state as the dashboard receives it: without the pace bookkeeping, each series thinned. */
export function stateForDashboard(
  state: TrainingRunState,
  maxPoints = MAX_POINTS_PER_SERIES,
): TrainingDashboardSnapshot['state'] {
  const { pace: _pace, ...rest } = state;
  const series = Object.fromEntries(
    TRAINING_CHARTS.map((chart) => [
      chart,
      Object.fromEntries(
        Object.entries(state.series[chart]).map(([name, points]) => [
          name,
          thinSeries(points, maxPoints),
        ]),
      ),
    ]),
  ) as Record<TrainingChartId, Record<string, [number, number][]>>;
  return structuredClone({ ...rest, series });
}

/** The view state the dashboard keeps (and its serializer restores): which run folder it shows. */
export interface DashboardViewState {
  outDir: string;
}

/** True for a view state a restored dashboard can use. */
export function isDashboardViewState(value: unknown): value is DashboardViewState {
  return (
    !!value &&
    typeof (value as DashboardViewState).outDir === 'string' &&
    (value as DashboardViewState).outDir.length > 0
  );
}
