import type { FidelityScores } from '../../fidelity/scores';
import type { DiffKind } from '../../fidelity/structuralDiff';
import type { EventLocation } from '../format/reader';
import type { EpisodeStatus, RunMode } from '../format/schema';

/** What the index knows of one call without reading its events. */
export interface CallEntry {
  callId: string;
  turnId: string;
  episodeId: string;
  tool: string;
  /** Position among its turn's calls. */
  index: number;
  rehearsal?: EventLocation;
  actual?: EventLocation;
  fidelity?: EventLocation;
  /** Code of the rehearsal's parse error, if it failed to parse. */
  rehearsalError?: string;
  /** Code of the actual call's error (timeout, crash, no recorded answer), if any. */
  actualError?: string;
  /** The tool answered with an error result. */
  actualIsError?: boolean;
  comparable?: 'json' | 'text' | 'none';
  scores?: FidelityScores;
  counts?: Record<DiffKind, number>;
}

/** What the index knows of one turn. */
export interface TurnEntry {
  turnId: string;
  episodeId: string;
  index: number;
  location: EventLocation;
  kind: 'calls' | 'final' | 'error';
  /** The act parse error code when `kind` is `error`. */
  parseError?: string;
  /** First characters of the final answer. */
  answerPreview?: string;
  callIds: string[];
}

/** What the index knows of one episode. */
export interface EpisodeEntry {
  episodeId: string;
  index: number;
  taskId: string;
  mode: RunMode;
  role?: 'imagined' | 'committed';
  location: EventLocation;
  turnIds: string[];
  end?: {
    status: EpisodeStatus;
    reward: number | null;
    success: boolean | null;
    location: EventLocation;
    errorCode?: string;
  };
  /** From the episode's start to its end, by the events' timestamps (ended episodes). */
  durationMs?: number;
}
