import { StudioError } from '../base/errors';
import type { JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import type { ToolDefinition } from '../protocol/types';
import { USER_TOOL_PREFIX, isAdminTool } from './adminTools';
import type { ToolBackend } from './backend';
import { envError } from './errors';
import { ReplayBackend } from './replayBackend';
import type { CallOptions, CallOutcome, Environment, EnvironmentSnapshot } from './types';

/** Default limit of one tool call when neither the call nor the task sets one: 30 s. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/** Node timers hold at most 2^31-1 ms; a longer timeout would fire at once. Leaves room for the SDK's backstop. */
const MAX_TIMEOUT_MS = 2_000_000_000;

function clampTimeout(ms: number): number {
  return Number.isFinite(ms)
    ? Math.min(Math.max(1, Math.round(ms)), MAX_TIMEOUT_MS)
    : MAX_TIMEOUT_MS;
}

/** Options of a {@link ToolEnvironment}. */
export interface ToolEnvironmentOptions {
  /** The tools the agent may call (a task's allow-list); all tools when absent. */
  allowTools?: readonly string[];
  /** Timeout of a call that sets none (default {@link DEFAULT_CALL_TIMEOUT_MS}). */
  callTimeoutMs?: number;
  /** Timeout of each server's snapshot (default 30 s). */
  snapshotTimeoutMs?: number;
}

/**
 * An {@link Environment} made of tool servers (MCP connections, replay recordings). It routes each
 * call by tool name, applies the allow-list, hides and refuses admin tools, and measures latency.
 */
export class ToolEnvironment implements Environment {
  readonly source: 'mcp' | 'replay';
  private routes = new Map<string, { backend: ToolBackend; tool: ToolDefinition }>();
  private offered: ToolDefinition[] = [];
  /** The user's own tools (`rehearsal__user__<name>`), by their own names. */
  private userRoutes = new Map<string, { backend: ToolBackend; tool: ToolDefinition }>();
  private started = false;
  private disposed = false;

  constructor(
    private readonly backends: readonly ToolBackend[],
    private readonly options: ToolEnvironmentOptions = {},
  ) {
    this.source =
      backends.length > 0 && backends.every((b) => b instanceof ReplayBackend) ? 'replay' : 'mcp';
  }

  /** The servers, by name. */
  get serverNames(): string[] {
    return this.backends.map((b) => b.name);
  }

  async startEpisode(seed?: number): Promise<void> {
    if (this.disposed)
      throw new StudioError('NO_EPISODE', 'This environment was disposed; open a new one.');
    this.started = false;
    const results = await Promise.allSettled(this.backends.map((b) => b.startEpisode(seed)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed)
      throw failed.reason instanceof StudioError
        ? failed.reason
        : new StudioError('SERVER_START_FAILED', String(failed.reason));

    const routes = new Map<string, { backend: ToolBackend; tool: ToolDefinition }>();
    for (const backend of this.backends) {
      for (const tool of backend.tools()) {
        const other = routes.get(tool.name);
        if (other) {
          throw new StudioError(
            'TOOL_NAME_CONFLICT',
            `Servers "${other.backend.name}" and "${backend.name}" both offer a tool named "${tool.name}"; a task can use only one of them. Remove one server from the task.`,
          );
        }
        routes.set(tool.name, { backend, tool });
      }
    }
    const allow = this.options.allowTools;
    if (allow) {
      const missing = allow.filter((name) => !routes.has(name));
      if (missing.length) {
        throw new StudioError(
          'TASK_TOOL_MISSING',
          `The task allows ${missing.map((m) => `"${m}"`).join(', ')}, but no server offers ${missing.length > 1 ? 'them' : 'it'}. Servers offer: ${[...routes.keys()].join(', ') || 'no tools'}.`,
        );
      }
      const allowed = new Set(allow);
      for (const name of [...routes.keys()]) if (!allowed.has(name)) routes.delete(name);
    }
    this.routes = routes;
    this.offered = [...routes.values()].map((r) => r.tool);
    // The user's tools are not the agent's: the allow-list does not apply; the first server wins.
    const userRoutes = new Map<string, { backend: ToolBackend; tool: ToolDefinition }>();
    for (const backend of this.backends)
      for (const tool of backend.userTools?.() ?? [])
        if (!userRoutes.has(tool.name)) userRoutes.set(tool.name, { backend, tool });
    this.userRoutes = userRoutes;
    this.started = true;
  }

  tools(): ToolDefinition[] {
    return this.offered.slice();
  }

  userTools(): ToolDefinition[] {
    return [...this.userRoutes.values()].map((r) => r.tool);
  }

  /** Calls the user's own tool `name` (`rehearsal__user__<name>` on the server that offers it). */
  async callUserTool(
    name: string,
    args: JsonValue,
    options: CallOptions = {},
  ): Promise<CallOutcome> {
    const running = this.started && !this.disposed;
    const route = running ? this.userRoutes.get(name) : undefined;
    if (!route)
      return {
        error: running
          ? envError(
              'UNKNOWN_TOOL',
              `"${name}" is not one of the user's tools (${[...this.userRoutes.keys()].join(', ') || 'none'}).`,
            )
          : envError('NO_EPISODE', 'No episode is running: call startEpisode first.'),
        latencyMs: 0,
        server: '',
      };
    return this.callRoute(route, `${USER_TOOL_PREFIX}${name}`, name, args, options);
  }

  readOnlyHints(): ReadonlyMap<string, boolean> {
    const hints = new Map<string, boolean>();
    for (const backend of this.backends) {
      for (const [name, hint] of backend.readOnlyHints?.() ?? []) {
        if (this.routes.get(name)?.backend === backend) hints.set(name, hint);
      }
    }
    return hints;
  }

  async call(name: string, args: JsonValue, options: CallOptions = {}): Promise<CallOutcome> {
    const t0 = performance.now();
    const done = (
      server: string,
      answer: Omit<CallOutcome, 'latencyMs' | 'server'>,
    ): CallOutcome => ({
      ...answer,
      latencyMs: Math.round((performance.now() - t0) * 1000) / 1000,
      server,
    });
    if (!this.started || this.disposed)
      return done('', {
        error: envError('NO_EPISODE', 'No episode is running: call startEpisode first.'),
      });
    if (isAdminTool(name))
      return done('', {
        error: envError(
          'UNKNOWN_TOOL',
          `"${name}" is reserved for the environment and not offered to the agent.`,
        ),
      });
    const route = this.routes.get(name);
    if (!route) {
      const offered = this.offered.map((t) => t.name).join(', ');
      return done('', {
        error: envError(
          'UNKNOWN_TOOL',
          `"${name}" is not one of this task's tools (${offered || 'none'}).`,
        ),
      });
    }
    return this.callRoute(route, name, name, args, options, t0);
  }

  /** Calls `serverName` on the route's server (`name` as errors name it), its arguments checked. */
  private async callRoute(
    route: { backend: ToolBackend },
    serverName: string,
    name: string,
    args: JsonValue,
    options: CallOptions,
    t0 = performance.now(),
  ): Promise<CallOutcome> {
    const done = (answer: Omit<CallOutcome, 'latencyMs' | 'server'>): CallOutcome => ({
      ...answer,
      latencyMs: Math.round((performance.now() - t0) * 1000) / 1000,
      server: route.backend.name,
    });
    if (!isJsonObject(args)) {
      return done({
        error: envError(
          'INVALID_ARGUMENTS',
          `The arguments of ${name} must be a JSON object, not ${Array.isArray(args) ? 'an array' : args === null ? 'null' : typeof args}.`,
        ),
      });
    }
    const timeoutMs = clampTimeout(
      options.timeoutMs ?? this.options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    );
    const answer = await route.backend.call(serverName, args, {
      timeoutMs,
      signal: options.signal,
    });
    return done(answer);
  }

  async snapshot(): Promise<EnvironmentSnapshot> {
    const timeout = this.options.snapshotTimeoutMs ?? 30_000;
    const values = await Promise.all(this.backends.map((b) => b.snapshot(timeout)));
    const out: EnvironmentSnapshot = {};
    this.backends.forEach((b, i) => {
      out[b.name] = values[i];
    });
    return out;
  }

  /** Stops every server and waits until their processes are gone. */
  async close(): Promise<void> {
    this.disposed = true;
    this.started = false;
    await Promise.all(
      this.backends.map(async (b) => {
        const closable = b as ToolBackend & { close?: () => Promise<void> };
        if (closable.close) await closable.close();
        else b.dispose();
      }),
    );
  }

  dispose(): void {
    void this.close();
  }
}
