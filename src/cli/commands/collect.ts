import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { requireNumber } from '../../core/base/numbers';
import { OUTSIDE_NUMBERS } from '../../core/base/outsideNumbers';
import { writeCollectedTraces } from '../../core/otlp/otlpLive';
import { OTLP_HTTP_PORT, OtlpReceiver } from '../../core/otlp/otlpReceiver';
import { STUDIO_FOLDER } from '../../core/trace/format/discover';
import type { CliIO } from '../io';
import { EXIT } from '../io';
import { listenError } from '../listenError';
import { outFolderArg } from '../outArg';

/**
 * `rehearse collect [--port N] [--out <dir>] [--runs <dir>]`: an OTLP/HTTP receiver on 127.0.0.1
 * with a token per launch. Each trace, once complete, is imported as `rehearse import otlp` imports
 * a file: its run trace into `--runs` (default `.rehearsal/runs`, where the trace explorer looks),
 * its task and replay recording into `--out`; one line per trace written. Ctrl+C writes what is
 * pending, then stops.
 */
export async function collectCommand(
  options: { port?: string; out?: string; runs?: string },
  io: CliIO,
): Promise<number> {
  const port = requireNumber(options.port, OUTSIDE_NUMBERS.flagPort, OTLP_HTTP_PORT, {
    text: true,
  });
  const out = outFolderArg(
    options.out ?? path.join(STUDIO_FOLDER, 'imports', 'otlp-live'),
    '--out',
    'tasks/, recordings/ and examples.jsonl go into it',
  );
  const runs = outFolderArg(
    options.runs ?? path.join(STUDIO_FOLDER, 'runs'),
    '--runs',
    'one run per batch of traces goes into it',
  );
  const token = randomBytes(24).toString('base64url');
  const receiver = new OtlpReceiver({
    token,
    onTraces: (data) => writeCollectedTraces(data, out, runs, io),
    onError: (err) => io.err(`rehearse: writing traces failed: ${(err as Error).message}`),
  });
  let url: string;
  try {
    url = await receiver.listen(port);
  } catch (err) {
    throw listenError(err, port);
  }
  io.out(`Receiving OTLP/HTTP (protobuf or JSON) at ${url}/v1/traces and /v1/logs. Ctrl+C stops.`);
  io.out('Point an instrumented agent at it:');
  io.out(`  export OTEL_EXPORTER_OTLP_ENDPOINT=${url}`);
  io.out(`  export OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20${token}`);
  let stop = () => undefined as void;
  await new Promise<void>((resolve) => {
    stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  process.removeListener('SIGINT', stop);
  process.removeListener('SIGTERM', stop);
  await receiver.close();
  io.out('stopped; every trace received is written');
  return EXIT.ok;
}
