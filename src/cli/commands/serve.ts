import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import { PolicyHostClient } from '../../core/policy/hostClient';
import type { DeviceSetting } from '../../core/policy/onnx/device';
import { OpenAICompatibleServer } from '../../core/policy/openaiServer';
import { readPolicySettings } from '../../core/policy/policySettings';
import type { CliIO } from '../io';
import { listenError } from '../listenError';
import { defaultModelFolder } from '../../core/base/studioRoot';
import { requireNumber } from '../../core/base/numbers';
import { OUTSIDE_NUMBERS } from '../../core/base/outsideNumbers';

/** `rehearse serve --policy <model> [--port N]`: the local policy as an OpenAI-compatible endpoint. */
export async function serveCommand(
  args: { policy?: string; port?: string; device?: string; apiKey?: string; verbose?: boolean },
  io: CliIO,
): Promise<number> {
  // A key per launch unless one is given: any local program (or web page, were the checks of Host
  // and Origin not there) could otherwise drive the policy and read its answers.
  const given = args.apiKey ?? process.env.REHEARSAL_SERVE_API_KEY;
  if (given !== undefined && !/^[\x21-\x7e]{16,256}$/.test(given))
    throw new StudioError(
      'USAGE',
      'The API key (--api-key or REHEARSAL_SERVE_API_KEY) must be 16 to 256 printable characters without spaces.',
    );
  const apiKey = given ?? `rs-${randomBytes(24).toString('base64url')}`;
  const port = requireNumber(args.port, OUTSIDE_NUMBERS.flagPort, 8000, { text: true });
  const dir =
    !args.policy || args.policy === 'default' ? defaultModelFolder() : path.resolve(args.policy);
  const { identifierSlots } = await readPolicySettings(dir);
  const host = await PolicyHostClient.start({
    modelDir: dir,
    device: (args.device ?? 'auto') as DeviceSetting,
    log: (l) => io.err(l),
    probeLog: args.verbose ? (l) => io.err(l) : undefined,
  });
  const server = new OpenAICompatibleServer(host, path.basename(dir), {
    identifierSlots: identifierSlots === true,
    apiKey,
  });
  let url: string;
  try {
    url = await server.listen(port);
  } catch (err) {
    // The policy host is a child process: it must not outlive a server that never started.
    host.dispose();
    throw listenError(err, port);
  }
  io.out(
    `Serving ${dir} on ${host.device.device} at ${url} (model "${path.basename(dir)}"). Ctrl+C stops.`,
  );
  io.out(
    given === undefined
      ? `API key for this launch (send "Authorization: Bearer <key>"; e.g. OPENAI_API_KEY for the openai client): ${apiKey}`
      : 'API key: the one given (--api-key or REHEARSAL_SERVE_API_KEY).',
  );
  let crashed = false;
  let stop = () => undefined as void;
  await new Promise<void>((resolve) => {
    stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    host.onDidCrash((err) => {
      crashed = true;
      io.err(`rehearse: ${err.message}`);
      resolve();
    });
  });
  process.removeListener('SIGINT', stop);
  process.removeListener('SIGTERM', stop);
  await server.close();
  host.dispose();
  return crashed ? 1 : 0;
}
