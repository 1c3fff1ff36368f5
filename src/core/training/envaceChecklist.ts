import { canonicalJson } from '../base/canonicalJson';
import type { JsonValue } from '../base/json';
import { checkTurn } from '../tasks/checks/envaceReward';
import { checkId } from '../tasks/checks/grade';
import { evaluateCall, evaluateNoCall } from '../tasks/checks/ruleChecks';
import type { TranscriptCall } from '../tasks/checks/transcript';
import type {
  CallCheck,
  CheckSpec,
  JudgeCheck,
  Matcher,
  NoCallCheck,
  TaskFile,
} from '../tasks/format/taskFile';

/** Where an item's evidence is, in EnvACE's words (`evidence[].from`, `focus_on`). */
export type EnvaceFocus =
  | 'user.content'
  | 'assistant.content.thinking'
  | 'assistant.content.user_visible_reply'
  | 'assistant.tool_calls'
  | 'tool.content';

/**
 * One checklist item with every field EnvACE reads by key: `interaction.py` reads
 * `required_for_next_turn`, `focus_on` and `weight` of each item, `checklist_reward.py`
 * `question`, `focus_on`, `pass_condition`, `failure_examples` and `evidence[].snippet`
 * (agent_system/environments/env_package/checklist/). A missing key is a KeyError there, caught in
 * `envs.py`: the turn silently scores 0. So every key is written, empty when the studio has nothing.
 */
export interface EnvaceChecklistItem {
  id: string;
  question: string;
  focus_on: EnvaceFocus;
  pass_condition: string;
  failure_examples: string[];
  evidence: { turn: number; step: number; from: EnvaceFocus; snippet: string }[];
  required_for_next_turn: boolean;
  weight: number;
}

/** Where a checklist came from: the task's checks, or (no task file known) the recorded calls. */
export type ChecklistSource = 'checks' | 'calls';

/** The places EnvACE's judge prompt looks (`focus_on`). */
const FOCUS: readonly string[] = [
  'assistant.tool_calls',
  'assistant.content.thinking',
  'assistant.content.user_visible_reply',
  'tool.content',
];

/**
 * The id of the item that stands in a user turn with no item of its own. EnvACE cannot judge an
 * empty turn: `interaction.py` slices the turn's verdicts with `range(0, n, len(this_turn_checklist))`,
 * which raises `ValueError('range() arg 3 must not be zero')`; `envs.py` catches it and ends the
 * episode with a turn reward of 0. An item of weight 0 keeps the turn judged and adds nothing.
 */
export const ANSWERED_ITEM = 'answered';

function item(
  fields: Pick<EnvaceChecklistItem, 'id' | 'question' | 'focus_on' | 'weight'> &
    Partial<EnvaceChecklistItem>,
): EnvaceChecklistItem {
  // Keys in one order, as EnvACE's own data writes them.
  return {
    id: fields.id,
    question: fields.question,
    focus_on: fields.focus_on,
    pass_condition: fields.pass_condition ?? '',
    failure_examples: fields.failure_examples ?? [],
    evidence: fields.evidence ?? [],
    required_for_next_turn: fields.required_for_next_turn ?? false,
    weight: fields.weight,
  };
}

/** A matcher as words a judge reads: `equals "W123"`, `contains "refund"`, ... */
function matcherText(m: Matcher): string {
  if (m.equals !== undefined) return `equals ${canonicalJson(m.equals)}`;
  if (m.oneOf !== undefined) return `is one of ${canonicalJson(m.oneOf)}`;
  if (m.contains !== undefined) return `contains ${JSON.stringify(m.contains)}`;
  if (m.matches !== undefined) return `matches the pattern /${m.matches}/`;
  if (m.exists !== undefined) return m.exists ? 'is present' : 'is absent';
  return 'is anything';
}

function argsText(args: { [key: string]: Matcher } | undefined): string {
  const parts = Object.entries(args ?? {}).map(([k, m]) => `${k} ${matcherText(m)}`);
  return parts.length ? ` with arguments where ${parts.join(', ')}` : '';
}

function judgeItem(c: JudgeCheck, id: string, turn: number): EnvaceChecklistItem {
  // EnvACE allows four places to look; a task's own free text falls back to the visible reply.
  const focus = (
    c.focus_on && FOCUS.includes(c.focus_on) ? c.focus_on : 'assistant.content.user_visible_reply'
  ) as EnvaceFocus;
  return item({
    id,
    question: c.question,
    focus_on: focus,
    pass_condition: c.pass_condition ?? '',
    failure_examples: c.failure_examples ?? [],
    evidence: (c.evidence ?? []).map((snippet, step) => ({ turn, step, from: focus, snippet })),
    required_for_next_turn: c.required_for_next_turn ?? false,
    weight: c.weight ?? 1,
  });
}

/**
 * One task check as an EnvACE checklist item: the same id, weight and user turn, and a question a
 * judge reads. Rule checks are never `required_for_next_turn` (the studio ends an episode early only
 * on its judge items).
 */
export function checkItem(check: CheckSpec, index: number, turn: number): EnvaceChecklistItem {
  const id = checkId(check, index);
  const weight = check.weight ?? 1;
  const pass = (text: string) => (check.description ? `${text} (${check.description})` : text);
  switch (check.kind) {
    case 'judge':
      return judgeItem(check, id, turn);
    case 'call': {
      const count =
        check.max !== undefined
          ? `between ${check.min ?? 1} and ${check.max} times`
          : `at least ${check.min ?? 1} time${(check.min ?? 1) === 1 ? '' : 's'}`;
      const text = `The assistant calls ${check.tool}${argsText(check.args)} ${count}${check.ok ? ', and the tool returns a result that is not an error' : ''}.`;
      return item({
        id,
        question: `Does the assistant call ${check.tool}${argsText(check.args)}?`,
        focus_on: 'assistant.tool_calls',
        pass_condition: pass(text),
        weight,
      });
    }
    case 'no_call':
      return item({
        id,
        question: `Does the assistant refrain from calling ${check.tool}${argsText(check.args)}?`,
        focus_on: 'assistant.tool_calls',
        pass_condition: pass(`No call of ${check.tool}${argsText(check.args)} reaches the tool.`),
        weight,
      });
    case 'answer': {
      const wants = [
        ...(check.contains?.length
          ? [
              `contains ${check.mode === 'any' ? 'one of' : 'all of'} ${canonicalJson(check.contains)}`,
            ]
          : []),
        ...(check.numbers?.length ? [`states the numbers ${canonicalJson(check.numbers)}`] : []),
        ...(check.notContains?.length
          ? [`does not contain ${canonicalJson(check.notContains)}`]
          : []),
      ];
      return item({
        id,
        question: `Does the assistant's reply say what it should (${wants.join('; ') || 'any reply'})?`,
        focus_on: 'assistant.content.user_visible_reply',
        pass_condition: pass(`The final reply ${wants.join(' and ') || 'exists'}.`),
        weight,
      });
    }
    case 'state':
      return item({
        id,
        question: `After the assistant's actions, does the value at ${check.path} in ${check.server}'s state ${matcherText(check)}?`,
        focus_on: 'tool.content',
        pass_condition: pass(
          `The tools' results show that ${check.server}'s ${check.path} ${matcherText(check)}.`,
        ),
        weight,
      });
    case 'bfcl':
      return item({
        id,
        question: `Do the assistant's calls leave the same state and results as BFCL's ground truth for ${check.record}?`,
        focus_on: 'assistant.tool_calls',
        pass_condition: pass(`Each user turn's calls match ${canonicalJson(check.groundTruth)}.`),
        weight,
      });
    case 'tau2':
      return item({
        id,
        question: `Does the assistant resolve τ²-bench ${check.domain} task ${check.task} as its policy and expected actions require?`,
        focus_on: 'assistant.tool_calls',
        pass_condition: pass(
          `The calls leave the database as τ²'s expected actions for ${check.task} leave it, and the assistant says what the task expects communicated.`,
        ),
        weight,
      });
  }
}

/** The items of one user turn made from its recorded calls, when no task file gives checks. */
function callItems(
  calls: { name: string; arguments: JsonValue }[],
  turn: number,
): EnvaceChecklistItem[] {
  return calls.map((c, k) => {
    const args = canonicalJson(c.arguments);
    return item({
      id: `t${turn}-call-${k + 1}`,
      question: `Does the assistant call ${c.name} with the arguments ${args}?`,
      focus_on: 'assistant.tool_calls',
      pass_condition: `A ${c.name} call whose arguments match ${args}.`,
      evidence: [{ turn, step: k, from: 'assistant.tool_calls', snippet: `${c.name} ${args}` }],
      weight: 1,
    });
  });
}

/**
 * The calls of an episode as EnvACE's judge meets them: per user turn, per assistant step (one act
 * of the policy: its calls with what came back; a final answer is a step without calls).
 */
export type TurnSteps = TranscriptCall[][][];

/** A call item whose verdict EnvACE's judge cannot give as the studio did, wherever it is placed. */
export interface UnfaithfulItem {
  item: string;
  weight: number;
  /** The studio's verdict over the whole episode. */
  studio: boolean;
  /** What EnvACE's judge gives, read literally, at the user turn the item is exported in. */
  envace: boolean;
  /** The user turn (0-based) the item is exported in. */
  turn: number;
}

/**
 * EnvACE's verdict on a call or no-call item at one user turn, read literally: interaction.py judges
 * every item at every assistant step of the turn, on the turn's messages up to that step (the earlier
 * turns are only "Previous Messages"), and `_aggregate_turn_score` passes an item that passed at any
 * step. The studio's own matchers decide each step.
 */
export function envaceLiteralVerdict(
  check: CallCheck | NoCallCheck,
  steps: readonly TranscriptCall[][],
): boolean {
  for (let k = 0; k < Math.max(1, steps.length); k++) {
    const transcript = {
      turns: [{ user: '', calls: steps.slice(0, k + 1).flat() }],
      snapshot: { ok: false as const, error: 'not needed' },
    };
    const one = { ...check, turn: 0 };
    const r =
      check.kind === 'call'
        ? evaluateCall(one as CallCheck, transcript)
        : evaluateNoCall(one as NoCallCheck, transcript);
    if (r.passed === true) return true;
  }
  return false;
}

/**
 * The user turn an item is exported in. The studio grades a check without a `turn` over the whole
 * episode, at the last user turn; EnvACE's judge sees one user turn's calls. A call or no-call check
 * graded `true` or `false` goes to the latest user turn where EnvACE's judge, read literally, gives
 * the same verdict (bank-0058's `add_payee` of the first user turn: that turn, not the last); when no
 * turn does, it stays at the last and is reported. Every other check keeps the studio's turn.
 */
function placement(
  check: CheckSpec,
  id: string,
  turns: number,
  episode: { steps: TurnSteps; verdicts: ReadonlyMap<string, boolean | null> } | undefined,
): { turn: number; unfaithful?: UnfaithfulItem } {
  const turn = checkTurn(check, turns);
  if (!episode || (check.kind !== 'call' && check.kind !== 'no_call') || check.turn !== undefined)
    return { turn };
  const studio = episode.verdicts.get(id);
  // Not graded (the last user turn never answered): no turn of EnvACE scores it either.
  if (typeof studio !== 'boolean') return { turn };
  const literal = (t: number) => envaceLiteralVerdict(check, episode.steps[t] ?? []);
  for (let t = turns - 1; t >= 0; t--) if (literal(t) === studio) return { turn: t };
  return {
    turn,
    unfaithful: { item: id, weight: check.weight ?? 1, studio, envace: literal(turn), turn },
  };
}

/**
 * An episode's checklist, one list of items per user turn of the task (EnvACE's `num_turns` is its
 * length), so that EnvACE's reward formula over it gives the studio's `--reward envace` figure:
 * with the task file, each of its checks becomes one item with the same id and weight, in the user
 * turn the studio grades it at (`checkTurn`: its `turn`, else the last; a call or no-call check
 * without a turn where EnvACE's judge sees what the studio saw, see {@link placement}); without one,
 * one item per recorded call. A turn left with no item gets the weight-0 {@link ANSWERED_ITEM}.
 * `episode` gives the recorded calls by user turn and step, and the studio's verdicts by item id.
 */
export function envaceChecklist(
  task: TaskFile | undefined,
  episode: { steps: TurnSteps; verdicts: ReadonlyMap<string, boolean | null> },
): { checklist: EnvaceChecklistItem[][]; source: ChecklistSource; unfaithful: UnfaithfulItem[] } {
  const checks = task?.checks ?? [];
  const source: ChecklistSource = checks.length ? 'checks' : 'calls';
  const turns = Math.max(task?.turns.length ?? 0, episode.steps.length);
  const checklist: EnvaceChecklistItem[][] = Array.from({ length: turns }, (_, t) =>
    source === 'calls' ? callItems((episode.steps[t] ?? []).flat(), t) : [],
  );
  const unfaithful: UnfaithfulItem[] = [];
  if (source === 'checks')
    checks.forEach((c, i) => {
      const placed = placement(c, checkId(c, i), turns, episode);
      if (placed.unfaithful) unfaithful.push(placed.unfaithful);
      checklist[placed.turn].push(checkItem(c, i, placed.turn));
    });
  checklist.forEach((items, turn) => {
    if (!items.length)
      items.push(
        item({
          id: `${ANSWERED_ITEM}-t${turn}`,
          question: "Does the assistant respond to the user's message of this turn?",
          focus_on: 'assistant.content.user_visible_reply',
          pass_condition:
            'Any reply. This item stands in a turn with no item of its own and weighs nothing.',
          weight: 0,
        }),
      );
  });
  return { checklist, source, unfaithful };
}
