import type { IDisposable } from '../base/disposable';
import type { JsonObject, JsonValue } from '../base/json';
import type { ToolResultContent } from '../fidelity/responseValue';
import type { ToolDefinition } from '../protocol/types';
import type { EnvError } from './errors';

/** What a backend answers to one call (the environment adds latency and the server name). */
export interface BackendAnswer {
  response?: ToolResultContent;
  error?: EnvError;
}

/** Options a backend receives for one call: the effective timeout and a cancellation signal. */
export interface BackendCallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * One tool server inside an environment: an MCP connection or a replay recording. The environment
 * routes calls by tool name, hides admin tools, and measures latency.
 */
export interface ToolBackend extends IDisposable {
  readonly name: string;
  /** Gets a clean state for an episode; rejects with a StudioError SERVER_START_FAILED. */
  startEpisode(seed: number | undefined): Promise<void>;
  /** The server's tools, admin tools excluded. */
  tools(): ToolDefinition[];
  /**
   * The tools whose server says whether they only read (MCP's `readOnlyHint`), by name; a tool
   * without the hint is absent. Absent where the backend knows none (a replay recording).
   */
  readOnlyHints?(): ReadonlyMap<string, boolean>;
  /** The user's own tools the server offers (`rehearsal__user__<name>`), by their own names. */
  userTools?(): ToolDefinition[];
  call(tool: string, args: JsonObject, options: BackendCallOptions): Promise<BackendAnswer>;
  /** The server's state, or null when it offers no snapshot. */
  snapshot(timeoutMs: number): Promise<JsonValue | null>;
}
