import { spawn } from 'node:child_process';
import type { ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import {
  CancellationTokenSource,
  createMessageConnection,
  ErrorCodes,
  ResponseError,
} from 'vscode-jsonrpc/node';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { Disposable } from '../base/disposable';
import { Emitter } from '../base/event';
import { isStudioErrorCode } from '../base/errorCodes';
import { StudioError } from '../base/errors';
import { LineSplitter } from '../base/lines';
import { studioRoot } from '../base/studioRoot';
import * as HostProtocol from './hostProtocol';
import { HostStderr } from './hostStderr';
import type { KvCacheMode } from './onnx/decoder';
import type { DeviceReport, DeviceSetting } from './onnx/device';
import { describeDeviceChoice, withProbeReasons } from './onnx/device';
import { delayMs, safeTimeout } from '../base/timers';

/** How to start a policy host. */
export interface PolicyHostOptions {
  modelDir: string;
  device?: DeviceSetting;
  threads?: number;
  /** Most sequences decoding at once across requests (continuous batching); the host's default is 64. */
  maxSequences?: number;
  /** Most KV cache the host holds, in MiB; its default is 1024. */
  kvCacheMb?: number;
  /** `copy` keeps the main graph's decode loop even where the folder has the slots graph (benchmarks compare the two). */
  kvCache?: KvCacheMode;
  /**
   * Receives the host's own stderr lines (its logs, native warnings) and, once the model is loaded,
   * one line saying which device runs it and why (`device: cpu (auto; cuda not used: ...)`).
   */
  log?: (line: string) => void;
  /**
   * Receives what onnxruntime and Dawn printed while each device was tried (`probe cuda: ...`); left
   * out, those lines are shown nowhere (verbose output passes one).
   */
  probeLog?: (line: string) => void;
  /** The Node executable; defaults to the current one (Electron runs it in Node mode). */
  nodePath?: string;
  /** The host script; defaults to `dist/policy-host.js` of this installation. */
  hostScript?: string;
  /**
   * Largest JavaScript heap of the host in MB (`--max-old-space-size`); the default is Node's. A host
   * past it dies with POLICY_HOST_OUT_OF_MEMORY instead of taking the machine's memory.
   */
  maxHeapMb?: number;
}

/** Node's options that profile the host when {@link HostProtocol.PROFILE_DIR_VARIABLE} is set. */
function profileArgs(): string[] {
  const dir = process.env[HostProtocol.PROFILE_DIR_VARIABLE];
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, 'host')}`] : [];
}

/**
 * Failures of the pipe to the host rather than answers from it: a request written as the host dies
 * fails with one of these before the process reports its exit.
 */
const CONNECTION_FAILURES: ReadonlySet<number> = new Set([
  ErrorCodes.MessageWriteError,
  ErrorCodes.PendingResponseRejected,
  ErrorCodes.ConnectionInactive,
]);

/** What V8 prints when a process runs out of heap. */
const OUT_OF_MEMORY = /JavaScript heap out of memory|Reached heap limit|Allocation failed/;

/** The coded error of a host that exited: out of memory when its last words say so. */
export function hostExitError(
  code: number | null,
  signal: NodeJS.Signals | null,
  stderrTail: string,
): StudioError {
  const how = signal ? `signal ${signal}` : `code ${code}`;
  const tail = stderrTail ? `; its last output:\n${stderrTail}` : '';
  if (OUT_OF_MEMORY.test(stderrTail)) {
    return new StudioError(
      'POLICY_HOST_OUT_OF_MEMORY',
      `The policy host ran out of memory and exited (${how}): use a smaller model or shorter prompts, or allow it more memory${tail}`,
    );
  }
  return new StudioError('POLICY_HOST_CRASHED', `The policy host exited (${how})${tail}`);
}

/**
 * Starts and speaks to the policy host process over JSON-RPC. A crash of the host rejects every
 * pending request with a coded error carrying the tail of its stderr (POLICY_HOST_OUT_OF_MEMORY
 * when it ran out of memory, else POLICY_HOST_CRASHED), and fires `onDidCrash`.
 */
export class PolicyHostClient extends Disposable {
  private readonly crashed = this._register(new Emitter<StudioError>());
  /** Fires once if the host process dies while in use. */
  readonly onDidCrash = this.crashed.event;
  private readonly tokenListeners = new Map<number, (sample: number, delta: string) => void>();
  private exitError: StudioError | undefined;
  private nextRequestId = 1;
  private stopping = false;

  private constructor(
    private readonly child: ChildProcessByStdio<Writable, Readable, Readable>,
    private readonly connection: MessageConnection,
    readonly device: DeviceReport,
    private readonly exited: Promise<StudioError>,
  ) {
    super();
  }

  /** Starts a host, loads the model, and resolves once it is ready to generate. */
  static async start(options: PolicyHostOptions): Promise<PolicyHostClient> {
    const script = options.hostScript ?? path.join(studioRoot(), 'dist', 'policy-host.js');
    if (!existsSync(script))
      throw new StudioError(
        'POLICY_HOST_MISSING',
        `The policy host script ${script} is missing; build the studio first (npm run build).`,
      );
    const heapLimit =
      options.maxHeapMb !== undefined
        ? [`--max-old-space-size=${Math.max(16, Math.floor(options.maxHeapMb))}`]
        : [];
    const child = spawn(
      options.nodePath ?? process.execPath,
      [...heapLimit, ...profileArgs(), script],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', OMP_WAIT_POLICY: 'PASSIVE' },
      },
    );
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    // The host's own last lines are quoted when it dies; what the device probes printed is not.
    const stderr = new HostStderr({ log: options.log, probeLog: options.probeLog });
    child.stderr.setEncoding('utf8');
    const stderrLines = new LineSplitter((line) => stderr.line(line));
    child.stderr.on('data', (chunk: string) => stderrLines.push(chunk));
    const exited = new Promise<StudioError>((resolve) => {
      // 'close', not 'exit': the last stderr lines (V8's out-of-memory report) are read by then.
      child.on('close', (code, signal) =>
        resolve(hostExitError(code, signal, stderr.lastWords(stderrLines.rest))),
      );
      child.on('error', (err) =>
        resolve(
          new StudioError(
            'POLICY_HOST_START_FAILED',
            `Cannot start the policy host: ${err.message}`,
          ),
        ),
      );
    });
    connection.listen();
    let init: HostProtocol.InitializeResult;
    try {
      init = await Promise.race([
        connection.sendRequest(HostProtocol.initialize, {
          modelDir: options.modelDir,
          device: options.device ?? 'auto',
          threads: options.threads,
          maxSequences: options.maxSequences,
          kvCacheMb: options.kvCacheMb,
          kvCache: options.kvCache,
        }),
        exited.then((e) => {
          throw e;
        }),
      ]);
    } catch (err) {
      child.kill();
      connection.dispose();
      throw toStudioError(err);
    }
    const device = withProbeReasons(init.device, (d) => stderr.probeText(d));
    options.log?.(describeDeviceChoice(options.device ?? 'auto', device));
    const client = new PolicyHostClient(child, connection, device, exited);
    connection.onNotification(HostProtocol.token, (p) =>
      client.tokenListeners.get(p.requestId)?.(p.sample, p.delta),
    );
    void exited.then((err) => {
      client.exitError = err;
      connection.dispose();
      if (!client.stopping) client.crashed.fire(err);
    });
    return client;
  }

  /** The host's process id (tests kill it to check crash handling). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Generates through the host; rejects with POLICY_HOST_CRASHED if it dies meanwhile. */
  async generate(
    params: Omit<HostProtocol.GenerateParams, 'requestId' | 'stream'>,
    onToken?: (sample: number, delta: string) => void,
    signal?: AbortSignal,
  ): Promise<HostProtocol.GenerateResult> {
    if (this.exitError) throw this.exitError;
    const requestId = this.nextRequestId++;
    if (onToken) this.tokenListeners.set(requestId, onToken);
    const cancel = new CancellationTokenSource();
    const onAbort = () => cancel.cancel();
    signal?.addEventListener('abort', onAbort);
    if (signal?.aborted) cancel.cancel(); // 'abort' has fired already
    try {
      return await this.race(
        this.connection.sendRequest(
          HostProtocol.generate,
          { ...params, requestId, stream: !!onToken },
          cancel.token,
        ),
      );
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.tokenListeners.delete(requestId);
      cancel.dispose();
    }
  }

  endSession(session: string): void {
    if (!this.exitError)
      void this.connection
        .sendNotification(HostProtocol.endSession, { session })
        .catch(() => undefined);
  }

  async stats(): Promise<HostProtocol.Stats> {
    return this.race(this.connection.sendRequest(HostProtocol.stats));
  }

  private race<T>(request: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const sub = this.onDidCrash((err) => reject(err));
      request
        .then(resolve, async (err) => {
          // A closed pipe can reject a request just before the process reports its exit: wait for it.
          const answered = err instanceof ResponseError && !CONNECTION_FAILURES.has(err.code);
          if (!answered && !this.exitError) {
            await Promise.race([this.exited, delayMs(1000)]);
          }
          reject(this.exitError ?? toStudioError(err));
        })
        .finally(() => sub.dispose());
    });
  }

  override dispose(): void {
    if (this.isDisposed) return;
    this.stopping = true;
    if (!this.exitError) {
      this.connection.sendRequest(HostProtocol.shutdown).catch(() => undefined);
      const kill = safeTimeout(() => this.child.kill('SIGKILL'), 2000);
      this.child.once('exit', () => clearTimeout(kill));
    }
    super.dispose();
  }
}

function toStudioError(err: unknown): StudioError {
  if (err instanceof StudioError) return err;
  if (err instanceof ResponseError) {
    // The host (hostMain.ts) sends a StudioError's code, or POLICY_HOST_ERROR.
    const code: unknown = (err.data as { code?: unknown } | undefined)?.code;
    return new StudioError(isStudioErrorCode(code) ? code : 'POLICY_HOST_ERROR', err.message);
  }
  return new StudioError('POLICY_HOST_ERROR', err instanceof Error ? err.message : String(err));
}
