import type { JsonObject } from '../base/json';
import type { ActParseErrorCode } from '../protocol/codes';
import type { ToolDefinition } from '../protocol/types';

/** One call of an imported episode: the producer's id, what was asked, what the tool answered. */
export interface OtlpCall {
  /** The producer's call id as written (`call_…`), when the trace holds one. */
  id?: string;
  name: string;
  arguments: JsonObject;
  /** The tool's answer as text; absent only while the episode is being rebuilt. */
  result?: string;
  /** True when the tool failed, false when it succeeded; absent when the trace does not say. */
  isError?: boolean;
}

/** One act of the agent: its text and calls, or its final answer. */
export interface OtlpTurn {
  /** The user message right before it. */
  user?: string;
  text: string;
  calls: OtlpCall[];
  /** A turn without calls whose text holds a broken call (the studio's act parser's error). */
  parseError?: { code: ActParseErrorCode; message: string };
}

/** One OTLP trace as an episode: the conversation it recorded, with what was recovered. */
export interface OtlpEpisode {
  traceId: string;
  /** The producer's `service.name`. */
  service?: string;
  file: string;
  line: number;
  system?: string;
  tools: ToolDefinition[];
  turns: OtlpTurn[];
  /** The final answer: the text of the last turn when it has no call. */
  answer?: string;
  /** What the trace did not say, or said only elsewhere, in words. */
  notes: string[];
}
