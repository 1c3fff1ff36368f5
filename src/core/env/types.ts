import type { IDisposable } from '../base/disposable';
import type { JsonValue } from '../base/json';
import type { ToolResultContent } from '../fidelity/responseValue';
import type { ToolDefinition } from '../protocol/types';
import type { EnvError } from './errors';

/** Options of one tool call. */
export interface CallOptions {
  /** The call fails with TOOL_TIMEOUT after this many milliseconds (default: the environment's). */
  timeoutMs?: number;
  /** Cancels the call (CALL_CANCELLED). */
  signal?: AbortSignal;
}

/**
 * The outcome of one tool call: the tool's result exactly as `call.actual` records it, or a coded
 * error explaining why there is none. Never both.
 */
export interface CallOutcome {
  response?: ToolResultContent;
  error?: EnvError;
  /** Wall time from sending the call to its outcome. */
  latencyMs: number;
  /** Name of the server that handled the call (empty when no server was chosen). */
  server: string;
}

/** The state of every server at the end of an episode, for grading: `null` where a server offers no snapshot. */
export type EnvironmentSnapshot = { [server: string]: JsonValue | null };

/**
 * The tools an agent acts on. The runner drives it: `startEpisode(seed)` for a clean state,
 * `tools()` for what the policy may call, `call()` per tool call, `snapshot()` for grading,
 * `dispose()` at the end of a run. `call` never throws: failures are coded {@link EnvError}s.
 */
export interface Environment extends IDisposable {
  /** Where actual responses come from, as `call.actual.source` records it. */
  readonly source: 'mcp' | 'replay';
  /**
   * Starts an episode from a clean state: each server is reset with `seed` through its own reset
   * tool, or started afresh. Rejects with a StudioError (SERVER_START_FAILED) when a server cannot
   * be started; nothing of the episode has run then.
   */
  startEpisode(seed?: number): Promise<void>;
  /** The tools offered to the agent (admin tools hidden, allow-list applied). Valid after `startEpisode`. */
  tools(): ToolDefinition[];
  /**
   * The offered tools whose server says whether they only read (MCP's `readOnlyHint`), by name; a
   * tool without the hint is absent. Optional: an environment that knows none may leave it out.
   * Valid after `startEpisode`.
   */
  readOnlyHints?(): ReadonlyMap<string, boolean>;
  /** Calls one tool. */
  call(name: string, args: JsonValue, options?: CallOptions): Promise<CallOutcome>;
  /**
   * The tools of the task's user, not the agent's (τ²'s telecom user acts on its own phone; servers
   * offer them as `rehearsal__user__<name>`), by their own names. Optional: an environment without
   * them may leave it out. Valid after `startEpisode`.
   */
  userTools?(): ToolDefinition[];
  /** Calls one of {@link userTools} for the user, in the same state the agent's calls act on. */
  callUserTool?(name: string, args: JsonValue, options?: CallOptions): Promise<CallOutcome>;
  /**
   * The servers' state for grading. Rejects with a StudioError SNAPSHOT_FAILED when a server's
   * snapshot tool fails (for example after it crashed).
   */
  snapshot(): Promise<EnvironmentSnapshot>;
  /** Stops every server and waits until their processes are gone (`dispose` does the same without waiting). */
  close(): Promise<void>;
}
