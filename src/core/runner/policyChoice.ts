import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../base/errors';
import { defaultModelFolder } from '../base/studioRoot';
import { EndpointPolicy } from '../policy/endpointPolicy';
import type { DeviceSetting } from '../policy/onnx/device';
import { OnnxPolicy } from '../policy/onnxPolicy';
import { readPolicySettings } from '../policy/policySettings';
import { mergePolicySettings } from './policyRunSettings';
import { ReferencePolicy } from '../policy/referencePolicy';
import type { Policy } from '../policy/types';
import type { RunSettings } from './settings';
import type { TaskFile } from '../tasks/format/taskFile';

/** Which policy a host runs tasks with, as a person picked it. */
export type PolicyChoice =
  | { kind: 'default' }
  | { kind: 'modelFolder'; folder: string }
  | { kind: 'endpoint'; url: string; model: string }
  | { kind: 'reference' };

/** The kinds of policy, as settings name them. */
export const POLICY_KINDS = ['default', 'modelFolder', 'endpoint', 'reference'] as const;

/** Where devices are allowed. */
export const DEVICE_SETTINGS: readonly DeviceSetting[] = ['auto', 'cpu', 'cuda', 'webgpu'];

/** The raw setting values a choice is read from. */
export interface PolicySettingValues {
  kind?: string;
  modelFolder?: string;
  endpointUrl?: string;
  endpointModel?: string;
}

/**
 * Reads a choice from settings. A choice that cannot be used (a model folder kind without a folder,
 * an endpoint without a URL or model) is a StudioError POLICY_NOT_CONFIGURED that says which setting to fill.
 */
export function policyChoiceFromSettings(
  values: PolicySettingValues,
  baseDir?: string,
): PolicyChoice {
  const kind = values.kind ?? 'default';
  switch (kind) {
    case 'default':
    case 'reference':
      return { kind };
    case 'modelFolder': {
      const folder = values.modelFolder?.trim();
      if (!folder)
        throw new StudioError(
          'POLICY_NOT_CONFIGURED',
          'rehearsal.policy.kind is "modelFolder" but rehearsal.policy.modelFolder is empty: run "Rehearsal: Select Policy" and pick a model folder.',
        );
      return { kind, folder: baseDir ? path.resolve(baseDir, folder) : folder };
    }
    case 'endpoint': {
      const url = values.endpointUrl?.trim();
      const model = values.endpointModel?.trim();
      if (!url || !model)
        throw new StudioError(
          'POLICY_NOT_CONFIGURED',
          'rehearsal.policy.kind is "endpoint" but rehearsal.policy.endpoint.url or .model is empty: run "Rehearsal: Select Policy" and give both.',
        );
      return { kind, url, model };
    }
    default:
      throw new StudioError(
        'POLICY_NOT_CONFIGURED',
        `rehearsal.policy.kind must be one of ${POLICY_KINDS.join(', ')}, not "${kind}".`,
      );
  }
}

/** A short name for status bars: `default model`, `reference`, `model my-policy`, `endpoint qwen2.5`. */
export function describePolicyChoice(choice: PolicyChoice): string {
  switch (choice.kind) {
    case 'default':
      return 'default model';
    case 'reference':
      return 'reference';
    case 'modelFolder':
      return `model ${path.basename(choice.folder)}`;
    case 'endpoint':
      return `endpoint ${choice.model}`;
  }
}

/** False for a policy that only acts (the reference policy): replay and rehearsal need one that rehearses. */
export function choiceRehearses(choice: PolicyChoice): boolean {
  return choice.kind !== 'reference';
}

/** What starting a policy needs besides the choice. */
export interface OpenPolicyOptions {
  device?: DeviceSetting;
  threads?: number;
  /** The endpoint's API key (from the editor's secret storage or the environment). */
  apiKey?: string;
  /** The tasks to be played (the reference policy plays their solutions). */
  tasks?: readonly TaskFile[];
  /** The policy host's log lines. */
  log?: (line: string) => void;
  /** What the devices' probes printed (onnxruntime, Dawn); shown nowhere when absent. */
  probeLog?: (line: string) => void;
}

/** The model folder a choice runs, if it runs one. */
export function modelFolderOf(choice: PolicyChoice): string | undefined {
  return choice.kind === 'default'
    ? defaultModelFolder()
    : choice.kind === 'modelFolder'
      ? choice.folder
      : undefined;
}

/**
 * Starts the chosen policy: the reference policy in process, an endpoint through its client, a model
 * folder in its own policy host process. A missing model folder is a StudioError MODEL_NOT_FOUND.
 */
export async function openPolicyFor(
  choice: PolicyChoice,
  options: OpenPolicyOptions = {},
): Promise<Policy> {
  if (choice.kind === 'reference') return new ReferencePolicy(options.tasks ?? []);
  if (choice.kind === 'endpoint')
    return new EndpointPolicy({ baseURL: choice.url, model: choice.model, apiKey: options.apiKey });
  const folder = modelFolderOf(choice)!;
  if (!existsSync(folder)) {
    const hint =
      choice.kind === 'default'
        ? 'build it with `npm run train:default`, or pick another policy with "Rehearsal: Select Policy"'
        : 'pick another with "Rehearsal: Select Policy"';
    throw new StudioError('MODEL_NOT_FOUND', `The model folder ${folder} does not exist; ${hint}.`);
  }
  return OnnxPolicy.start({
    modelDir: folder,
    device: options.device ?? 'auto',
    threads: options.threads,
    log: options.log,
    probeLog: options.probeLog,
  });
}

/** Run settings with what a model folder's `rehearsal_config.json` recommends under what was chosen. */
export async function settingsForPolicy(
  choice: PolicyChoice,
  chosen: Partial<RunSettings>,
): Promise<Partial<RunSettings>> {
  const folder = modelFolderOf(choice);
  return folder ? mergePolicySettings(await readPolicySettings(folder), chosen) : chosen;
}
