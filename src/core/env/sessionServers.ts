import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StudioError } from '../base/errors';
import { delayMs, safeTimeout } from '../base/timers';
import { StderrLog } from './stderrLog';

/** How to start a built-in domain server that gives each MCP session a world of its own. */
export interface SessionServerSpec {
  command: string;
  args: string[];
  env: { [name: string]: string };
  cwd?: string;
}

/** A hold on a running session server: its URL, its stderr; `release` when the session has ended. */
export interface SessionServerLease {
  url: string;
  /** The process's stderr (every session's), its last lines for a crash message. */
  stderr: StderrLog;
  /** True once the process has exited (a crash, or killed from outside). */
  exited(): boolean;
  release(): Promise<void>;
}

/** Options of {@link SessionServers.acquire}. */
export interface SessionServerOptions {
  /** Receives the process's stderr lines, `[name]`-prefixed (once per sink however many hold it). */
  log?: (line: string) => void;
  /** Limit for the process to start listening. */
  startTimeoutMs: number;
}

/** The arguments that make a built-in domain server one of these (see `serveDomain`). */
const SESSION_ARGS = ['--http', '0', '--world-per-session', '--lifeline'];
const LISTENING = /^listening (http:\/\/127\.0\.0\.1:\d+\/mcp)$/;

interface Running {
  child: ChildProcess;
  stderr: StderrLog;
  /** Log sinks of the sessions holding it, with how many hold each. */
  sinks: Map<(line: string) => void, number>;
  url: Promise<string>;
  holders: number;
  exited: boolean;
  gone: Promise<void>;
}

/**
 * The built-in domain servers of this process, one process per launch (bundle, arguments,
 * environment, folder) however many sessions use it: each MCP session holds a world of its own, so
 * the episodes in flight share a process rather than starting one each (a Node process costs
 * ~160 ms of CPU to start; 32 episodes in flight started 64). A process runs while a session holds
 * it and is stopped when the last one is released; it ends by itself when this process does (its
 * stdin is a lifeline). One that exits is started again by the next acquire.
 */
export class SessionServers {
  private readonly running = new Map<string, Running>();

  /** Process ids of the servers running now, for diagnostics and tests. */
  pids(): number[] {
    return [...this.running.values()].flatMap((r) =>
      !r.exited && r.child.pid !== undefined ? [r.child.pid] : [],
    );
  }

  async acquire(
    name: string,
    spec: SessionServerSpec,
    options: SessionServerOptions,
  ): Promise<SessionServerLease> {
    const key = JSON.stringify([spec.command, spec.args, spec.env, spec.cwd ?? null]);
    let r = this.running.get(key);
    if (!r || r.exited) {
      r = this.start(name, spec, options.startTimeoutMs);
      this.running.set(key, r);
    }
    r.holders++;
    const sink = options.log;
    if (sink) r.sinks.set(sink, (r.sinks.get(sink) ?? 0) + 1);
    const held = r;
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      // A run that has ended hears no more of a process another run still uses.
      if (sink) {
        const left = (held.sinks.get(sink) ?? 1) - 1;
        if (left > 0) held.sinks.set(sink, left);
        else held.sinks.delete(sink);
      }
      if (--held.holders > 0) return;
      if (this.running.get(key) === held) this.running.delete(key);
      await stopProcess(held);
    };
    try {
      const url = await held.url;
      return { url, stderr: held.stderr, exited: () => held.exited, release };
    } catch (err) {
      await release();
      throw err;
    }
  }

  private start(name: string, spec: SessionServerSpec, timeoutMs: number): Running {
    const sinks = new Map<(line: string) => void, number>();
    let listening: ((url: string) => void) | undefined;
    const stderr = new StderrLog(
      (line) => {
        for (const sink of sinks.keys()) sink(line);
      },
      name,
      40,
      (line) => {
        const m = LISTENING.exec(line);
        if (m) listening?.(m[1]);
      },
    );
    const child = spawn(spec.command, [...spec.args, ...SESSION_ARGS], {
      env: { ...getDefaultEnvironment(), ...spec.env },
      ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
      stdio: ['pipe', 'ignore', 'pipe'],
      windowsHide: true,
    });
    if (child.stderr) stderr.follow(child.stderr);
    // The lifeline: never written, ended only when this process ends.
    child.stdin?.on('error', () => undefined);
    let onGone: () => void = () => undefined;
    const gone = new Promise<void>((resolve) => (onGone = resolve));
    const r: Running = {
      child,
      stderr,
      sinks,
      holders: 0,
      exited: false,
      gone,
      url: Promise.resolve(''),
    };
    r.url = new Promise<string>((resolve, reject) => {
      const fail = (why: string) => {
        const tail = stderr.tail();
        reject(
          new StudioError(
            'SERVER_START_FAILED',
            `Server "${name}" could not be started: ${why}.${tail ? ` Its stderr ends with:\n${tail}` : ' It wrote nothing on stderr.'}`,
          ),
        );
      };
      const timer = safeTimeout(() => {
        fail(`it did not start listening within ${timeoutMs} ms`);
        child.kill('SIGKILL');
      }, timeoutMs);
      listening = (url) => {
        clearTimeout(timer);
        resolve(url);
      };
      child.on('error', (err) => {
        clearTimeout(timer);
        fail(err.message);
      });
      child.on('exit', (code, signal) => {
        r.exited = true;
        clearTimeout(timer);
        stderr.flush();
        fail(`it exited (${signal ?? `code ${code}`}) before listening`);
        onGone();
      });
    });
    // A start that failed is the acquirer's error; nothing else awaits it.
    r.url.catch(() => undefined);
    return r;
  }
}

/** Stops a process no session holds: SIGTERM, SIGKILL 500 ms later if it is still there. */
async function stopProcess(r: Running): Promise<void> {
  if (r.exited) return;
  r.child.kill('SIGTERM');
  await Promise.race([r.gone, delayMs(500, { unref: true })]);
  if (!r.exited) {
    r.child.kill('SIGKILL');
    await Promise.race([r.gone, delayMs(1_000, { unref: true })]);
  }
}

/** The session servers of this process (the CLI's, or the extension host's). */
export const sessionServers = new SessionServers();
