import type { CancellationToken, MessageConnection } from 'vscode-jsonrpc/node';
import { createMessageConnection, ResponseError } from 'vscode-jsonrpc/node';
import { StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import * as path from 'node:path';
import { StudioError, errorMessage } from '../base/errors';
import { namedRoot, writeFileInside } from '../base/writePath';
import * as HostProtocol from './hostProtocol';
import { OnnxEngine } from './onnx/engine';
import { emptyBatchStats } from './onnx/batchScheduler';

/** What the engine answers one generation with. */
type EngineGeneration = Awaited<ReturnType<OnnxEngine['generate']>>;

/**
 * The policy host: a child process that owns the ONNX model and answers JSON-RPC over stdin/stdout.
 * A native crash or a long generation here never freezes the editor or the CLI. Logs go to stderr.
 */
function main(): void {
  // stdout carries JSON-RPC only: anything else printed would corrupt it.
  console.log = (...args: unknown[]) => console.error(...args);
  const connection = createMessageConnection(
    new StreamMessageReader(process.stdin),
    new StreamMessageWriter(process.stdout),
  );
  let engine: OnnxEngine | undefined;
  const stats: HostProtocol.Stats = {
    requests: 0,
    promptTokens: 0,
    prefilled: 0,
    reused: 0,
    completionTokens: 0,
    decodeMs: 0,
    decodeSteps: 0,
  };

  const fail = (err: unknown): never => {
    if (err instanceof StudioError) throw new ResponseError(1, err.message, { code: err.code });
    throw new ResponseError(2, errorMessage(err), { code: 'POLICY_HOST_ERROR' });
  };

  connection.onRequest(HostProtocol.initialize, async (params) => {
    try {
      await engine?.dispose();
      engine = await OnnxEngine.load(params.modelDir, params.device, params.threads, {
        maxSequences: params.maxSequences,
        kvCacheMb: params.kvCacheMb,
        kvCache: params.kvCache,
        // The markers must stay in order with what the native providers print to fd 2 while they
        // are tried: libuv writes to the pipe at once while it has room, and the client drains it.
        onProbe: (device, phase) =>
          console.error(
            `${phase === 'begin' ? HostProtocol.PROBE_BEGIN : HostProtocol.PROBE_END} ${device}`,
          ),
      });
      return initializeResult(engine);
    } catch (err) {
      return fail(err);
    }
  });

  connection.onRequest(HostProtocol.generate, async (params, token: CancellationToken) => {
    if (!engine)
      return fail(
        new StudioError(
          'POLICY_NOT_LOADED',
          'No model is loaded; initialize the policy host first.',
        ),
      );
    try {
      const result = await generateOn(engine, params, token, connection);
      countGeneration(stats, result);
      return generateResult(result);
    } catch (err) {
      return fail(err);
    }
  });

  connection.onNotification(HostProtocol.endSession, ({ session }) => engine?.endSession(session));
  connection.onRequest(HostProtocol.stats, () => ({
    ...stats,
    ...(engine?.decoder.batchStats ?? emptyBatchStats()),
  }));
  connection.onRequest(HostProtocol.shutdown, async () => {
    await writeProfileStats({ ...stats, ...(engine?.decoder.batchStats ?? emptyBatchStats()) });
    await engine?.dispose();
    engine = undefined;
    setImmediate(() => process.exit(0));
  });
  connection.onClose(() => process.exit(0));
  connection.listen();
}

/**
 * Runs one `generate` request on the engine: the chat rendered and encoded, cancelled with the
 * request, each token sent as a notification when the request streams.
 */
function generateOn(
  engine: OnnxEngine,
  params: HostProtocol.GenerateParams,
  token: CancellationToken,
  connection: MessageConnection,
): Promise<EngineGeneration> {
  const abort = new AbortController();
  const sub = token.onCancellationRequested(() => abort.abort());
  // A cancel that came before the request was dispatched gives a token already cancelled, whose
  // event never fires (vscode-jsonrpc's `CancellationToken.Cancelled`).
  if (token.isCancellationRequested) abort.abort();
  const prompt = engine.encode(engine.renderChat(params.messages, params.tools));
  return engine
    .generate({
      promptIds: prompt,
      session: params.session,
      n: params.n,
      maxTokens: params.maxTokens,
      minTokens: params.minTokens,
      sampling: params.sampling,
      stopStrings: params.stopStrings,
      toolNames: params.toolNames,
      signal: abort.signal,
      onToken: params.stream
        ? (sample, delta) =>
            void connection.sendNotification(HostProtocol.token, {
              requestId: params.requestId,
              sample,
              delta,
            })
        : undefined,
    })
    .finally(() => sub.dispose());
}

/** The answer to `initialize`: the device the model runs on, its shape and the batch limits. */
function initializeResult(engine: OnnxEngine): HostProtocol.InitializeResult {
  const i = engine.info;
  return {
    device: engine.device,
    model: {
      dir: i.dir,
      layers: i.numLayers,
      vocabSize: i.vocabSize,
      maxPositions: i.maxPositions,
    },
    batch: { ...engine.decoder.limits, kvCache: engine.decoder.kvCache },
  };
}

/** Adds one generation to the host's running totals. */
function countGeneration(stats: HostProtocol.Stats, result: EngineGeneration): void {
  const completion = result.samples.reduce((s, x) => s + x.ids.length, 0);
  stats.requests++;
  // The prompt tokens read: a request cancelled while it waited for the batch read none.
  stats.promptTokens += result.prefilled + result.reused;
  stats.prefilled += result.prefilled;
  stats.reused += result.reused;
  stats.completionTokens += completion;
  stats.decodeMs += result.decodeMs;
  stats.decodeSteps += result.decodeSteps;
}

/** The answer to `generate`: each sample's text and token count, and the batch's timings. */
function generateResult(result: EngineGeneration): HostProtocol.GenerateResult {
  return {
    samples: result.samples.map((s) => ({
      text: s.text,
      finish: s.finish,
      completionTokens: s.ids.length,
    })),
    promptTokens: result.promptTokens,
    prefilled: result.prefilled,
    reused: result.reused,
    prefillMs: result.prefillMs,
    decodeMs: result.decodeMs,
    decodeSteps: result.decodeSteps,
    sharedPrefix: result.sharedPrefix,
    batchRows: result.batchRows,
    queuedMs: result.queuedMs,
  };
}

main();

/**
 * Under `npm run bench:profile` (PROFILE_DIR_VARIABLE of hostClient.ts): the counters and the host's
 * CPU time, for the profile's split of forward passes into prefill and decode.
 */
async function writeProfileStats(stats: HostProtocol.Stats): Promise<void> {
  const dir = process.env[HostProtocol.PROFILE_DIR_VARIABLE];
  if (!dir) return;
  try {
    // The folder the person named in the variable.
    await writeFileInside(
      namedRoot(dir),
      path.join(dir, 'host', 'stats.json'),
      JSON.stringify({ ...stats, cpu: process.cpuUsage(), uptimeS: process.uptime() }),
    );
  } catch (err) {
    console.error(`profile: cannot write the host's counters: ${errorMessage(err)}`);
  }
}
