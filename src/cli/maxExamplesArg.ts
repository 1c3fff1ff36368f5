import { StudioError } from '../core/base/errors';
import { requireNumber } from '../core/base/numbers';
import { OUTSIDE_NUMBERS } from '../core/base/outsideNumbers';
import type { Policy } from '../core/policy/types';
import type { RunSettings } from '../core/runner/settings';

/**
 * `--max-examples N` of `run` and `rollout`: the rehearse prompt shows at most N of a task's
 * examples (its `maxExamples`, over the policy's own `rehearsal_config.json`); absent, the policy's
 * setting stands. Grounded imagination (`verify --examples-out`) gives tasks the examples.
 */
export function maxExamplesArg(value: string | undefined): Partial<RunSettings> {
  const maxExamples = requireNumber(value, OUTSIDE_NUMBERS.flagMaxExamples, undefined, {
    text: true,
  });
  return maxExamples === undefined ? {} : { rehearsePrompt: { maxExamples } };
}

/**
 * Refuses `--max-examples` where the policy's rehearse prompt is EnvACE's, which shows every example
 * (as EnvACE does) and has no such limit; the policy is disposed first.
 */
export function refuseMaxExamplesForEnvace(
  settings: Partial<RunSettings>,
  chosen: Partial<RunSettings>,
  policy: Pick<Policy, 'dispose'>,
): void {
  if (
    chosen.rehearsePrompt?.maxExamples !== undefined &&
    settings.rehearsePrompt?.profile === 'envace'
  ) {
    policy.dispose();
    throw new StudioError(
      'USAGE',
      "--max-examples does not apply to this policy: its rehearse prompt is EnvACE's (rehearsal_config.json), which shows every example of a task. Leave it out.",
    );
  }
}
