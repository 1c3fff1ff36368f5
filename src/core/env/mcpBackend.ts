import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { clip } from '../base/clip';
import { mkdtempInside, removeInside, tempRoot } from '../base/writePath';
import { descendantsOf, signalAll } from './processTree';

/** Characters of a server's error message quoted in ours. */
const MESSAGE_CLIP = 500;

/** Most pages of a server's tools/list, and most tools, read at start (a server paging forever is refused). */
export const MAX_TOOL_PAGES = 100;
export const MAX_TOOLS = 1_000;
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { StudioError, errorMessage } from '../base/errors';
import type { JsonObject, JsonValue } from '../base/json';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../base/json';
import { parseStrictJson } from '../protocol/strictJson';
import type { ToolDefinition } from '../protocol/types';
import { RESET_TOOL, SNAPSHOT_TOOL, isAdminTool, userToolName } from './adminTools';
import type { BackendAnswer, BackendCallOptions, ToolBackend } from './backend';
import { envError } from './errors';
import { limitedFetch } from './httpLimit';
import type { ToolResultContent } from '../fidelity/responseValue';
import type { LaunchSpec } from './launch';
import {
  RESULT_LIMIT_BYTES,
  STDIO_MESSAGE_LIMIT_BYTES,
  resultSize,
  toResultContent,
} from './resultContent';
import type { SessionServerLease } from './sessionServers';
import { sessionServers } from './sessionServers';
import { StderrLog } from './stderrLog';
import type { McpTool } from './toolDefinitions';
import { readOnlyHintOf, toToolDefinition } from './toolDefinitions';
import { substituteEpisodeDir } from './variables';
import type { TimerHandle } from '../base/timers';
import { delayMs, safeTimeout } from '../base/timers';

declare const STUDIO_VERSION: string | undefined;

/** Options of an {@link McpBackend}. */
export interface McpBackendOptions {
  /** Receives the server's stderr and protocol faults, one line at a time, prefixed with `[name]`. */
  log?: (line: string) => void;
  /** Limit for spawning, the MCP handshake and listing tools (default 30 s). */
  startTimeoutMs?: number;
  /** Limit for the admin calls reset and snapshot (default 30 s). */
  adminTimeoutMs?: number;
}

interface Session {
  client: Client;
  transport: StdioClientTransport | StreamableHTTPClientTransport;
  stderr: StderrLog;
  /** The shared process of a built-in domain, held while this session lasts. */
  lease?: SessionServerLease;
  tools: McpTool[];
  closed: boolean;
  closeReason?: string;
  protocolFaults: number;
  lastFault?: string;
  overflowed: boolean;
}

const CLIENT_INFO = {
  name: 'rehearsal-studio',
  version: typeof STUDIO_VERSION === 'string' ? STUDIO_VERSION : '0.0.0-dev',
};
const delay = (ms: number) => delayMs(ms, { unref: true });

/** A tool's result as the answer of the call: refused when nested too deep or too large. */
function checkedResult(tool: string, response: ToolResultContent): BackendAnswer {
  if (nestsDeeperThan(response.structured)) {
    return {
      error: envError(
        'RESULT_TOO_DEEP',
        `${tool} returned structured content nested deeper than ${MAX_JSON_DEPTH} levels; the result was not recorded.`,
      ),
    };
  }
  const size = resultSize(response);
  if (size > RESULT_LIMIT_BYTES) {
    return {
      error: envError(
        'RESULT_TOO_LARGE',
        `${tool} returned ${size} bytes, over the ${RESULT_LIMIT_BYTES}-byte limit; the result was not recorded.`,
      ),
    };
  }
  return { response };
}

/**
 * The answer of a call that ran past its time: a protocol error when the server wrote lines that are
 * not JSON-RPC meanwhile (its answer may be among them), else a timeout.
 */
function timedOutAnswer(
  s: Session,
  tool: string,
  timeoutMs: number,
  faultsBefore: number,
): BackendAnswer {
  if (s.protocolFaults > faultsBefore) {
    return {
      error: envError(
        'PROTOCOL_ERROR',
        `${tool} gave no valid answer within ${timeoutMs} ms; meanwhile the server wrote ${s.protocolFaults - faultsBefore} line(s) that are not JSON-RPC on stdout (last: ${s.lastFault}).`,
      ),
    };
  }
  return {
    error: envError('TOOL_TIMEOUT', `${tool} did not answer within ${timeoutMs} ms.`),
  };
}

/**
 * One MCP server (stdio child process or streamable HTTP) behind the {@link ToolBackend} interface:
 * started on demand, reset through `rehearsal__reset` when it has it or restarted otherwise,
 * restarted after a crash, stopped on dispose. Calls never throw: every failure is a coded error.
 */
export class McpBackend implements ToolBackend {
  private session: Session | undefined;
  private episodeDir: string | undefined;
  private readonly startTimeoutMs: number;
  private readonly adminTimeoutMs: number;

  constructor(
    readonly name: string,
    private readonly spec: LaunchSpec,
    private readonly options: McpBackendOptions = {},
  ) {
    this.startTimeoutMs = options.startTimeoutMs ?? 30_000;
    this.adminTimeoutMs = options.adminTimeoutMs ?? 30_000;
  }

  /** Process id of the running stdio server, for diagnostics and tests. */
  get pid(): number | undefined {
    const t = this.session?.transport;
    return t instanceof StdioClientTransport ? (t.pid ?? undefined) : undefined;
  }

  async startEpisode(seed: number | undefined): Promise<void> {
    const perEpisode = this.spec.kind === 'stdio' && this.spec.perEpisode;
    if (!perEpisode && this.session && !this.session.closed) {
      if (!this.hasTool(RESET_TOOL)) {
        await this.stop();
      } else {
        const failure = await this.reset(seed);
        if (failure === undefined) return;
        this.options.log?.(`[${this.name}] reset failed (${failure}); restarting the server`);
        await this.stop();
      }
    } else {
      await this.stop();
    }
    await this.start();
    if (this.hasTool(RESET_TOOL) && seed !== undefined) {
      const failure = await this.reset(seed);
      if (failure !== undefined) {
        await this.stop();
        throw new StudioError(
          'SERVER_START_FAILED',
          `Server "${this.name}" started but its ${RESET_TOOL} failed: ${failure}`,
        );
      }
    }
  }

  tools(): ToolDefinition[] {
    return (this.session?.tools ?? []).filter((t) => !isAdminTool(t.name)).map(toToolDefinition);
  }

  userTools(): ToolDefinition[] {
    return (this.session?.tools ?? []).flatMap((t) => {
      const name = userToolName(t.name);
      return name ? [{ ...toToolDefinition(t), name }] : [];
    });
  }

  readOnlyHints(): ReadonlyMap<string, boolean> {
    const hints = new Map<string, boolean>();
    for (const t of this.session?.tools ?? []) {
      const hint = readOnlyHintOf(t);
      if (hint !== undefined && !isAdminTool(t.name)) hints.set(t.name, hint);
    }
    return hints;
  }

  async call(tool: string, args: JsonObject, options: BackendCallOptions): Promise<BackendAnswer> {
    const s = this.session;
    if (!s)
      return {
        error: envError(
          'NO_EPISODE',
          `Server "${this.name}" is not started: call startEpisode first.`,
        ),
      };
    if (s.closed)
      return {
        error: envError('SERVER_CRASHED', this.crashMessage(s, 'stopped earlier in this episode')),
      };
    if (options.signal?.aborted)
      return {
        error: envError('CALL_CANCELLED', `The call to ${tool} was cancelled before it was sent.`),
      };

    const controller = new AbortController();
    let timedOut = false;
    let cancelled = false;
    const timer = safeTimeout(() => {
      timedOut = true;
      controller.abort('timeout');
    }, options.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      controller.abort('cancelled');
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const faultsBefore = s.protocolFaults;
    try {
      const result = await s.client.request(
        { method: 'tools/call', params: { name: tool, arguments: args } },
        CallToolResultSchema,
        // The SDK's own timer is a backstop only: ours decides, so timeouts are told from server errors.
        { signal: controller.signal, timeout: options.timeoutMs + 5_000 },
      );
      return checkedResult(tool, toResultContent(result));
    } catch (err) {
      if (cancelled)
        return { error: envError('CALL_CANCELLED', `The call to ${tool} was cancelled.`) };
      if (timedOut) return timedOutAnswer(s, tool, options.timeoutMs, faultsBefore);
      return await this.failedCallAnswer(s, tool, err);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * The answer of a call whose request failed (not by timeout or cancellation): an overflow, a crash,
   * a result that is not an MCP tool result, or the tool's own JSON-RPC error response.
   */
  private async failedCallAnswer(s: Session, tool: string, err: unknown): Promise<BackendAnswer> {
    if (s.overflowed) {
      return {
        error: envError(
          'RESULT_TOO_LARGE',
          s.transport instanceof StdioClientTransport
            ? `${tool} sent a message over ${STDIO_MESSAGE_LIMIT_BYTES} bytes; the connection was closed and the server is restarted for the next episode.`
            : `${tool} sent an answer over ${STDIO_MESSAGE_LIMIT_BYTES} bytes; it was not read past that, and the server keeps serving.`,
        ),
      };
    }
    // A shared process that died fails its sessions' requests as unreachable, before its exit (and
    // its last stderr lines) arrive: that wait comes first.
    const waited = !!s.lease && !(err instanceof McpError);
    if (waited) await delay(30);
    if (
      s.closed ||
      s.lease?.exited() ||
      (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)
    ) {
      if (!waited) await delay(30); // let the last stderr lines arrive
      return {
        error: envError(
          'SERVER_CRASHED',
          this.crashMessage(s, `stopped while ${tool} was running`),
        ),
      };
    }
    if (isSchemaError(err)) {
      return {
        error: envError(
          'PROTOCOL_ERROR',
          `${tool} answered with a result that is not an MCP tool result (${clip(schemaIssues(err), MESSAGE_CLIP)}).`,
        ),
      };
    }
    if (err instanceof McpError) {
      // A JSON-RPC error answer is the tool's own error response: recorded as such.
      return { response: { text: [err.message], isError: true } };
    }
    return {
      error: envError(
        'SERVER_CRASHED',
        `Server "${this.name}" could not be reached while ${tool} was running: ${clip(errorMessage(err), MESSAGE_CLIP)}.`,
      ),
    };
  }

  async snapshot(timeoutMs: number): Promise<JsonValue | null> {
    if (!this.hasTool(SNAPSHOT_TOOL)) return null;
    const answer = await this.call(SNAPSHOT_TOOL, {}, { timeoutMs });
    if (answer.error)
      throw new StudioError(
        'SNAPSHOT_FAILED',
        `Snapshot of server "${this.name}" failed: ${answer.error.code}: ${answer.error.message}`,
      );
    const r = answer.response ?? {};
    if (r.isError)
      throw new StudioError(
        'SNAPSHOT_FAILED',
        `Snapshot of server "${this.name}" failed: ${(r.text ?? []).join(' ')}`,
      );
    if (r.structured !== undefined) return r.structured;
    const parsed = parseStrictJson((r.text ?? []).join('\n'));
    if (!parsed.ok)
      throw new StudioError('SNAPSHOT_FAILED', `Snapshot of server "${this.name}" is not JSON.`);
    return parsed.value;
  }

  /** Stops the server; the next `startEpisode` starts it again. */
  async close(): Promise<void> {
    await this.stop();
    await this.removeEpisodeDir();
  }

  dispose(): void {
    void this.close();
  }

  private hasTool(name: string): boolean {
    return !!this.session?.tools.some((t) => t.name === name);
  }

  /** Calls the reset tool; returns why it failed, or undefined. */
  private async reset(seed: number | undefined): Promise<string | undefined> {
    const answer = await this.call(RESET_TOOL, seed === undefined ? {} : { seed }, {
      timeoutMs: this.adminTimeoutMs,
    });
    if (answer.error) return `${answer.error.code}: ${answer.error.message}`;
    if (answer.response?.isError) return (answer.response.text ?? []).join(' ') || 'error';
    return undefined;
  }

  private async start(): Promise<void> {
    const flags = { overflowed: false };
    const { transport, stderr, lease } = await this.openTransport(flags);
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const session: Session = {
      client,
      transport,
      stderr,
      ...(lease ? { lease } : {}),
      tools: [],
      closed: false,
      protocolFaults: 0,
      get overflowed() {
        return flags.overflowed;
      },
      set overflowed(v: boolean) {
        flags.overflowed = v;
      },
    };
    client.onclose = () => {
      session.closed = true;
      session.closeReason ??= session.overflowed
        ? `after a message over ${STDIO_MESSAGE_LIMIT_BYTES} bytes`
        : undefined;
    };
    client.onerror = (err) => this.onClientError(session, err);
    this.session = session;
    try {
      await withDeadline(
        this.connectAndList(session),
        this.startTimeoutMs,
        `no answer to the MCP handshake within ${this.startTimeoutMs} ms`,
      );
    } catch (err) {
      await delay(30);
      await this.stop();
      const tail = stderr.tail();
      throw new StudioError(
        'SERVER_START_FAILED',
        `Server "${this.name}" could not be started: ${clip(errorMessage(err), MESSAGE_CLIP)}.${tail ? ` Its stderr ends with:\n${tail}` : ' It wrote nothing on stderr.'}`,
      );
    }
  }

  /**
   * The transport to the server: a stdio child process (in a fresh episode folder when its definition
   * uses one), its stderr followed; or streamable HTTP, its messages limited in size, to a URL or
   * to the shared process of a built-in domain (held until the session stops).
   */
  private async openTransport(flags: { overflowed: boolean }): Promise<{
    transport: StdioClientTransport | StreamableHTTPClientTransport;
    stderr: StderrLog;
    lease?: SessionServerLease;
  }> {
    const spec = this.spec;
    const http = (url: string, headers: { [name: string]: string }) =>
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers },
        fetch: limitedFetch(STDIO_MESSAGE_LIMIT_BYTES, () => {
          flags.overflowed = true;
        }),
      });
    if (spec.kind === 'session') {
      const lease = await sessionServers.acquire(this.name, spec, {
        log: this.options.log,
        startTimeoutMs: this.startTimeoutMs,
      });
      return { transport: http(lease.url, {}), stderr: lease.stderr, lease };
    }
    const stderr = new StderrLog(this.options.log, this.name);
    if (spec.kind === 'stdio') {
      let { command, args, env, cwd } = spec;
      if (spec.perEpisode) {
        await this.removeEpisodeDir();
        const dir = (this.episodeDir = await mkdtempInside(
          tempRoot(),
          path.join(os.tmpdir(), 'rehearsal-episode-'),
        ));
        command = substituteEpisodeDir(command, dir);
        args = args.map((a) => substituteEpisodeDir(a, dir));
        env = Object.fromEntries(
          Object.entries(env).map(([k, v]) => [k, substituteEpisodeDir(v, dir)]),
        );
        cwd = cwd === undefined ? undefined : substituteEpisodeDir(cwd, dir);
      }
      if (cwd !== undefined && !existsSync(cwd)) {
        throw new StudioError(
          'SERVER_START_FAILED',
          `Server "${this.name}" could not be started: its working folder ${cwd} does not exist.`,
        );
      }
      const stdio = new StdioClientTransport({
        command,
        args,
        env,
        ...(cwd ? { cwd } : {}),
        stderr: 'pipe',
        maxBufferSize: STDIO_MESSAGE_LIMIT_BYTES,
      });
      if (stdio.stderr) stderr.follow(stdio.stderr as Readable);
      return { transport: stdio, stderr };
    }
    return { transport: http(spec.url, spec.headers), stderr };
  }

  private async connectAndList(session: Session): Promise<void> {
    await session.client.connect(session.transport, { timeout: this.startTimeoutMs });
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      if (++pages > MAX_TOOL_PAGES || tools.length > MAX_TOOLS) {
        throw new Error(
          `its tools/list went on past ${MAX_TOOL_PAGES} pages or ${MAX_TOOLS} tools (${tools.length} so far); the studio reads at most that many`,
        );
      }
      const page = await session.client.listTools(cursor ? { cursor } : undefined, {
        timeout: this.startTimeoutMs,
      });
      tools.push(...(page.tools as McpTool[]));
      cursor = page.nextCursor;
    } while (cursor);
    session.tools = tools;
  }

  private onClientError(session: Session, err: Error): void {
    const message = errorMessage(err);
    if (/ReadBuffer exceeded/.test(message)) {
      session.overflowed = true;
      // The SDK drops the connection; a server still pushing megabytes into the pipe would linger
      // for seconds before exiting, so it is stopped now.
      const pid = session.transport instanceof StdioClientTransport ? session.transport.pid : null;
      if (pid) signalAll([pid], 'SIGKILL');
      return;
    }
    if (err instanceof SyntaxError || isSchemaError(err)) {
      session.protocolFaults++;
      session.lastFault = clip(message, 160);
      this.options.log?.(
        `[${this.name}] protocol error: not a JSON-RPC message on stdout (${session.lastFault})`,
      );
      return;
    }
    this.options.log?.(`[${this.name}] ${clip(message, 300)}`);
  }

  private crashMessage(s: Session, what: string): string {
    const tail = s.stderr.tail();
    const reason = s.closeReason ? ` (${s.closeReason})` : '';
    return `Server "${this.name}" ${what}${reason}; it is restarted for the next episode.${tail ? ` Its stderr ends with:\n${tail}` : ' It wrote nothing on stderr.'}`;
  }

  private async stop(): Promise<void> {
    const s = this.session;
    this.session = undefined;
    if (!s) return;
    s.closed = true;
    s.closeReason ??= 'stopped by the studio';
    const transport = s.transport;
    if (
      transport instanceof StreamableHTTPClientTransport &&
      transport.sessionId &&
      !s.lease?.exited()
    ) {
      await withDeadline(transport.terminateSession(), 1_000, 'terminate').catch(() => undefined);
    }
    const pid = transport instanceof StdioClientTransport ? transport.pid : null;
    // Taken before anything ends: once the launcher is gone its children belong to init.
    const tree = pid
      ? await withDeadline(descendantsOf(pid), 1_000, 'process tree').catch(() => [] as number[])
      : [];
    let exited = false;
    const closing = (s.client.transport ? s.client.close() : transport.close())
      .catch(() => undefined)
      .then(() => {
        exited = true;
      });
    // The SDK ends stdin and waits up to 4 s for the child; a server that does not exit on its own
    // within 200 ms gets SIGTERM, and SIGKILL if that is ignored too.
    for (const [wait, signal] of [
      [200, 'SIGTERM'],
      [500, 'SIGKILL'],
    ] as const) {
      await Promise.race([closing, delay(wait)]);
      if (!pid || exited) break;
      signalAll([pid], signal);
    }
    await closing;
    // What the server started and left behind (a launcher that did not exec, helpers): SIGTERM, then
    // SIGKILL for whatever is still there 300 ms later.
    if (signalAll(tree, 'SIGTERM')) {
      await delay(300);
      signalAll(tree, 'SIGKILL');
    }
    await s.lease?.release();
  }

  private async removeEpisodeDir(): Promise<void> {
    const dir = this.episodeDir;
    this.episodeDir = undefined;
    if (dir)
      await removeInside(tempRoot(), dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

function isSchemaError(err: unknown): boolean {
  const name = (err as { name?: string } | null)?.name;
  return name === 'ZodError' || name === '$ZodError';
}

function schemaIssues(err: unknown): string {
  const issues = (err as { issues?: { path?: unknown[]; message?: string }[] }).issues;
  if (!Array.isArray(issues)) return errorMessage(err);
  return issues
    .map((i) => `${(i.path ?? []).join('.') || 'result'}: ${i.message ?? 'invalid'}`)
    .join('; ');
}

async function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: TimerHandle | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = safeTimeout(() => reject(new Error(what)), ms);
  });
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
