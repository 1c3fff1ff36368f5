import type { PolicySettings } from '../policy/policySettings';
import { readPolicySettings } from '../policy/policySettings';
import type { Policy } from '../policy/types';
import type { RunSettings } from './settings';

/** Run settings with a policy's recommendations under what the person chose explicitly. */
export function mergePolicySettings(
  policy: PolicySettings,
  chosen: Partial<RunSettings>,
): Partial<RunSettings> {
  // identifierSlots is the policy's own business (OnnxPolicy applies it), not a run setting.
  return {
    ...chosen,
    rehearsePrompt: { ...policy.rehearsePrompt, ...chosen.rehearsePrompt },
    ...(policy.maxTokens || chosen.maxTokens
      ? { maxTokens: { ...policy.maxTokens, ...chosen.maxTokens } as RunSettings['maxTokens'] }
      : {}),
  };
}

/**
 * Run settings for a started policy: a model folder's recommendations (its `rehearsal_config.json`)
 * under what was chosen; other policies get what was chosen. Every command that runs, rolls out or
 * replays with a policy goes through here, so a compact-prompt policy is never replayed with another
 * prompt.
 */
export async function settingsForStartedPolicy(
  policy: Pick<Policy, 'info'>,
  chosen: Partial<RunSettings> = {},
): Promise<Partial<RunSettings>> {
  return policy.info.kind === 'onnx'
    ? mergePolicySettings(await readPolicySettings(policy.info.id), chosen)
    : chosen;
}
