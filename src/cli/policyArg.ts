import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../core/base/errors';
import { DEFAULT_POLICY_WORD, defaultModelFolder } from '../core/base/studioRoot';
import { didYouMean } from '../core/base/suggest';
import { EndpointPolicy } from '../core/policy/endpointPolicy';
import type { DeviceSetting } from '../core/policy/onnx/device';
import { OnnxPolicy } from '../core/policy/onnxPolicy';
import { ReferencePolicy } from '../core/policy/referencePolicy';
import type { KvCacheMode } from '../core/policy/onnx/decoder';
import type { Policy } from '../core/policy/types';
import type { TaskFile } from '../core/tasks/format/taskFile';
import { requireNumber } from '../core/base/numbers';
import { OUTSIDE_NUMBERS } from '../core/base/outsideNumbers';

/** Options that pick and configure a policy on the command line. */
export interface PolicyArgs {
  policy?: string;
  model?: string;
  device?: string;
  threads?: string;
  /** How a model folder keeps its KV cache (KvCacheMode); `slots` needs its model_slots.onnx, else it copies. */
  kvCache?: string;
  /** Constrain a tool call's name to the offered tools (model folders). */
  constrainToolNames?: boolean;
  /** Endpoints: record the sampled token ids and log-probs (`rollout --record-tokens`). */
  recordTokens?: boolean;
}

const DEVICES = ['auto', 'cpu', 'cuda', 'webgpu'];
const KV_CACHES: readonly KvCacheMode[] = ['slots', 'copy'];
/** The policies `--policy` names by word; anything else is a model folder or an endpoint. */
const POLICY_NAMES = ['default', 'reference'];

/**
 * Resolves `--policy`: `default` (the embedded policy), `reference` (the tasks' reference solutions),
 * an `http(s)://` endpoint (with `--model`; key from REHEARSAL_API_KEY or OPENAI_API_KEY), or a model
 * folder.
 */
export async function openPolicy(
  args: PolicyArgs,
  tasks: readonly TaskFile[],
  log?: (line: string) => void,
  /** What the devices' probes printed (`--verbose`); shown nowhere when absent. */
  probeLog?: (line: string) => void,
): Promise<Policy> {
  const spec = args.policy ?? 'default';
  if (spec === 'reference') return new ReferencePolicy(tasks);
  if (/^https?:\/\//.test(spec)) {
    if (!args.model)
      throw new StudioError(
        'USAGE',
        'An endpoint policy needs --model <name> (the model the server serves).',
      );
    return new EndpointPolicy({
      baseURL: spec,
      model: args.model,
      apiKey: process.env.REHEARSAL_API_KEY ?? process.env.OPENAI_API_KEY,
      ...(args.recordTokens ? { recordTokens: true } : {}),
    });
  }
  if (args.recordTokens)
    throw new StudioError(
      'USAGE',
      '--record-tokens asks a served model (an http(s):// --policy) for its sampled token ids; this policy is not one.',
    );
  const device = (args.device ?? 'auto') as DeviceSetting;
  if (!DEVICES.includes(device)) {
    const near = didYouMean(String(args.device), DEVICES);
    throw new StudioError(
      'USAGE',
      `--device must be one of ${DEVICES.join(', ')}, not "${args.device}".${near ? ` Did you mean ${near}?` : ''}`,
    );
  }
  if (spec !== 'default' && !existsSync(spec)) {
    const near = didYouMean(spec, POLICY_NAMES);
    if (near)
      throw new StudioError(
        'USAGE',
        `Unknown policy "${spec}" (no such folder). Did you mean --policy ${near}?`,
      );
  }
  const dir = spec === DEFAULT_POLICY_WORD ? defaultModelFolder() : path.resolve(spec);
  if (spec === DEFAULT_POLICY_WORD && !existsSync(dir))
    throw new StudioError(
      'MODEL_NOT_FOUND',
      `The default policy is missing at ${dir}; build it with \`npm run train:default\`.`,
    );
  const threads = requireNumber(args.threads, OUTSIDE_NUMBERS.flagThreads, undefined, {
    text: true,
  });
  const kvCache = (args.kvCache ?? 'slots') as KvCacheMode;
  if (!KV_CACHES.includes(kvCache)) {
    const near = didYouMean(String(args.kvCache), KV_CACHES);
    throw new StudioError(
      'USAGE',
      `--kv-cache must be slots or copy, not "${args.kvCache}".${near ? ` Did you mean ${near}?` : ''}`,
    );
  }
  return OnnxPolicy.start({
    modelDir: dir,
    device,
    threads,
    kvCache,
    log,
    probeLog,
    constrainToolNames: args.constrainToolNames === true,
  });
}

/**
 * For `--verbose`: each device a local policy tried, in order, and why the ones before it were not
 * used (the trace keeps the same list in its run event's `policy.devices`). Undefined for other policies.
 */
export function devicesTried(policy: Policy): string | undefined {
  const attempts = policy.info.devices;
  if (!attempts?.length) return undefined;
  return `devices tried: ${attempts.map((a) => (a.ok ? `${a.device} used` : `${a.device} not used: ${a.reason}`)).join('; ')}`;
}

/** The policy as the CLI's JSON output records it: its info, with the devices a local model tried. */
export function policyJson(policy: Policy): Record<string, unknown> {
  return { ...policy.info };
}
