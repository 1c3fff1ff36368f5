import * as path from 'node:path';
import { StudioError } from '../../core/base/errors';
import { PolicyHostClient } from '../../core/policy/hostClient';
import type { DeviceSetting } from '../../core/policy/onnx/device';
import { OpenAICompatibleServer } from '../../core/policy/openaiServer';
import type { CliIO } from '../io';
import { defaultPolicyDir } from '../policyArg';

/** `rehearse serve --policy <model> [--port N]`: the local policy as an OpenAI-compatible endpoint. */
export async function serveCommand(args: { policy?: string; port?: string; device?: string }, io: CliIO): Promise<number> {
  const port = args.port === undefined ? 8000 : Number(args.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new StudioError('USAGE', `--port must be a port number, not "${args.port}".`);
  const dir = !args.policy || args.policy === 'default' ? defaultPolicyDir() : path.resolve(args.policy);
  const host = await PolicyHostClient.start({ modelDir: dir, device: (args.device ?? 'auto') as DeviceSetting, log: (l) => io.err(l) });
  const server = new OpenAICompatibleServer(host, path.basename(dir));
  const url = await server.listen(port);
  io.out(`Serving ${dir} on ${host.device.device} at ${url} (model "${path.basename(dir)}"). Ctrl+C stops.`);
  let crashed = false;
  let stop = () => undefined as void;
  await new Promise<void>((resolve) => {
    stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    host.onDidCrash((err) => { crashed = true; io.err(`rehearse: ${err.message}`); resolve(); });
  });
  process.removeListener('SIGINT', stop);
  process.removeListener('SIGTERM', stop);
  await server.close();
  host.dispose();
  return crashed ? 1 : 0;
}
