import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../core/base/errors';
import { studioRoot } from '../core/base/studioRoot';
import { EndpointPolicy } from '../core/policy/endpointPolicy';
import type { DeviceSetting } from '../core/policy/onnx/device';
import { OnnxPolicy } from '../core/policy/onnxPolicy';
import { ReferencePolicy } from '../core/policy/referencePolicy';
import type { Policy } from '../core/policy/types';
import type { TaskFile } from '../core/tasks/taskFile';

/** Options that pick and configure a policy on the command line. */
export interface PolicyArgs {
  policy?: string;
  model?: string;
  device?: string;
  threads?: string;
}

const DEVICES = ['auto', 'cpu', 'cuda', 'webgpu'];

/** The embedded default policy's folder. */
export function defaultPolicyDir(): string {
  return path.join(studioRoot(), 'models', 'default');
}

/**
 * Resolves `--policy`: `default` (the embedded policy), `reference` (the tasks' reference solutions),
 * an `http(s)://` endpoint (with `--model`; key from REHEARSAL_API_KEY or OPENAI_API_KEY), or a model
 * folder.
 */
export async function openPolicy(args: PolicyArgs, tasks: readonly TaskFile[], log?: (line: string) => void): Promise<Policy> {
  const spec = args.policy ?? 'default';
  if (spec === 'reference') return new ReferencePolicy(tasks);
  if (/^https?:\/\//.test(spec)) {
    if (!args.model) throw new StudioError('USAGE', 'An endpoint policy needs --model <name> (the model the server serves).');
    return new EndpointPolicy({ baseURL: spec, model: args.model, apiKey: process.env.REHEARSAL_API_KEY ?? process.env.OPENAI_API_KEY });
  }
  const device = (args.device ?? 'auto') as DeviceSetting;
  if (!DEVICES.includes(device)) throw new StudioError('USAGE', `--device must be one of ${DEVICES.join(', ')}, not "${args.device}".`);
  const dir = spec === 'default' ? defaultPolicyDir() : path.resolve(spec);
  if (spec === 'default' && !existsSync(dir)) throw new StudioError('MODEL_NOT_FOUND', `The default policy is missing at ${dir}; build it with \`npm run train:default\`.`);
  const threads = args.threads ? Number(args.threads) : undefined;
  if (threads !== undefined && !(threads > 0)) throw new StudioError('USAGE', `--threads must be a positive number, not "${args.threads}".`);
  return OnnxPolicy.start({ modelDir: dir, device, threads, log });
}

/** Which policy ran, and for a local model on which device and why the devices tried before it were not used. */
export function describePolicy(policy: Policy): string {
  if (!(policy instanceof OnnxPolicy)) return `policy: ${policy.info.kind} ${policy.info.id}`;
  const skipped = policy.device.attempts.filter((a) => !a.ok).map((a) => `${a.device} not used: ${a.reason}`);
  return `policy: ${policy.info.id} on ${policy.device.device}${skipped.length ? ` (${skipped.join('; ')})` : ''}`;
}

/** The policy as the CLI's JSON output records it: its info, and for a local model the devices tried. */
export function policyJson(policy: Policy): Record<string, unknown> {
  return policy instanceof OnnxPolicy ? { ...policy.info, devices: policy.device.attempts } : { ...policy.info };
}
