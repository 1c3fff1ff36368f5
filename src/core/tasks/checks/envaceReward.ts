import type { CheckVerdict } from '../../trace/format/schema';
import type { CheckSpec, TaskFile } from '../format/taskFile';
import { stripPythonWhitespace } from '../../protocol/pythonText';

// EnvACE's reward (issue 18, row 8), from its code at commit 173e941:
// - agent_system/environments/env_package/checklist/envs.py, `_aggregate_turn_score`: when the agent
//   answers a user turn, the turn scores Σ weight of its items that passed (at any step of the turn);
//   `if self._last_tool_failed: turn_reward = 0.0`.
// - interaction.py, `generate_response_for_single_checklist`: an item of the turn with
//   `required_for_next_turn` that did not pass ends the episode; so does a judge failure
//   (`api_failed_count > 0 or judge_malformed_count > 0`).
// - agent_system/reward_manager/checklist.py: the episode's score is Σ turn rewards / num_checklists
//   / max_num_turns (`len(checklist_list[0])`, the task's user turns).
// - verl/trainer/ppo/ray_trainer.py, `apply_invalid_action_penalty` (`use_invalid_action_penalty`,
//   `invalid_action_penalty_coef` 0.1 in ppo_trainer.yaml): a row whose text is empty
//   (tool_caller_agent.py / tool_simulator_agent.py: `1 if (t and t.strip()) else 0`) loses 0.1.

/** How an episode is rewarded: the studio's share of passed checks, or EnvACE's per-turn rule. */
export type RewardRule = 'studio' | 'envace';

/** The reward rules, for option parsers. */
export const REWARD_RULES: readonly RewardRule[] = ['studio', 'envace'];

/** `invalid_action_penalty_coef` of EnvACE's ppo_trainer.yaml (`use_invalid_action_penalty: True`). */
export const ENVACE_INVALID_ACTION_PENALTY = 0.1;

/** Checklists per task: the studio keeps one (the importer reads the first of `checklist_list`). */
const CHECKLISTS = 1;

/**
 * The user turn (0-based) whose answer an item is graded at: its `turn`, else the last one (an item
 * without a turn looks at the whole conversation or the final state, known only at the end).
 */
export function checkTurn(check: CheckSpec, userTurns: number): number {
  const turn = 'turn' in check ? check.turn : undefined;
  return turn ?? Math.max(0, userTurns - 1);
}

/** A turn's reward as `_aggregate_turn_score` computes it for one checklist: Σ weight of passed items. */
export function envaceTurnScore(verdicts: readonly CheckVerdict[]): number {
  return verdicts.reduce((sum, v) => sum + (v.passed === true ? v.weight : 0), 0);
}

/**
 * Why EnvACE ends the episode after a judged turn, or undefined when it goes on: an unmet
 * `required_for_next_turn` item, or a judge item that could not be judged (EnvACE's judge failure).
 */
export function envaceTurnEnd(
  checks: readonly { spec: CheckSpec; verdict: CheckVerdict }[],
): string | undefined {
  const unmet = checks.find(
    (c) =>
      c.spec.kind === 'judge' &&
      c.spec.required_for_next_turn === true &&
      c.verdict.passed !== true,
  );
  if (unmet) return `the item ${unmet.verdict.id} (required_for_next_turn) did not pass`;
  const unjudged = checks.find((c) => c.spec.kind === 'judge' && c.verdict.passed === null);
  if (unjudged) return `the judge item ${unjudged.verdict.id} could not be judged`;
  return undefined;
}

/** The episode's score (reward_manager/checklist.py): Σ turn rewards / (checklists × the task's user turns). */
export function envaceEpisodeReward(
  turnRewards: readonly number[],
  task: Pick<TaskFile, 'turns'>,
): number {
  const total = turnRewards.reduce((a, b) => a + b, 0);
  return Math.round((total / CHECKLISTS / Math.max(1, task.turns.length)) * 1e6) / 1e6;
}

/** EnvACE's invalid action: `not (t and t.strip())`, Python's whitespace. */
export function isInvalidAction(text: string): boolean {
  return stripPythonWhitespace(text) === '';
}

/** A training row's reward under EnvACE's rule: the episode's score, less the penalty of an empty text. */
export function envaceRowReward(episodeReward: number, text: string): number {
  const penalty = isInvalidAction(text) ? ENVACE_INVALID_ACTION_PENALTY : 0;
  return Math.round((episodeReward - penalty) * 1e6) / 1e6;
}

/** Whether a tool message is an `error_tool_call` for envs.py: a JSON object with that key. */
export function isErrorToolCall(toolText: string): boolean {
  if (!toolText) return false;
  try {
    const parsed: unknown = JSON.parse(toolText);
    return (
      typeof parsed === 'object' &&
      parsed !== null &&
      !Array.isArray(parsed) &&
      'error_tool_call' in parsed
    );
  } catch {
    return false;
  }
}
