import { actualValue } from '../../fidelity/responseValue';
import { parseJsonPath } from '../../fidelity/jsonPath';
import type { AnswerCheck, CallCheck, NoCallCheck, StateCheck } from '../format/taskFile';
import { containsText, statesNumber } from './answerText';
import { applyMatcher, matchArguments, valueAt } from './matchers';
import type { EpisodeTranscript, TranscriptCall } from './transcript';

/** The verdict of one item before id, kind and weight are attached. */
export interface ItemResult {
  passed: boolean | null;
  /** The item's own score in [0, 1] where its grader gives one (τ²'s reward). */
  score?: number;
  detail?: string;
}

/** A state check against the final snapshot. */
export function evaluateState(check: StateCheck, transcript: EpisodeTranscript): ItemResult {
  if (!transcript.snapshot.ok)
    return { passed: false, detail: `no final state: ${transcript.snapshot.error}` };
  const state = transcript.snapshot.value[check.server];
  if (state === undefined)
    return { passed: false, detail: `server "${check.server}" is not part of the environment` };
  if (state === null)
    return {
      passed: null,
      detail: `not evaluated: server "${check.server}" offers no snapshot tool (rehearsal__snapshot)`,
    };
  const segments = parseJsonPath(check.path);
  if (!segments) return { passed: false, detail: `${check.path} is not a JSONPath` };
  const r = applyMatcher(check, valueAt(state, segments));
  return r.ok ? { passed: true } : { passed: false, detail: `${check.path} ${r.detail}` };
}

function callsOf(transcript: EpisodeTranscript, turn: number | undefined): TranscriptCall[] {
  const turns = turn === undefined ? transcript.turns : transcript.turns.slice(turn, turn + 1);
  return turns.flatMap((t) => t.calls);
}

/** True when the call reached the tool (a response came back, possibly an error response). */
function executed(c: TranscriptCall): boolean {
  return c.outcome?.response !== undefined;
}

function succeeded(c: TranscriptCall): boolean {
  const r = c.outcome?.response;
  return r !== undefined && !actualValue(r).isError;
}

/** A required call: enough executed calls of the tool with matching arguments, and not too many. */
export function evaluateCall(check: CallCheck, transcript: EpisodeTranscript): ItemResult {
  const min = check.min ?? 1;
  const candidates = callsOf(transcript, check.turn).filter(
    (c) => c.name === check.tool && (check.ok ? succeeded(c) : executed(c)),
  );
  let firstMiss: string | undefined;
  let matched = 0;
  for (const c of candidates) {
    const r = matchArguments(check.args, c.arguments);
    if (r.ok) matched++;
    else firstMiss ??= r.detail;
  }
  const where = check.turn === undefined ? '' : ` in turn ${check.turn}`;
  if (check.max !== undefined && matched > check.max)
    return {
      passed: false,
      detail: `${matched} matching call(s) of ${check.tool}${where}, at most ${check.max} allowed`,
    };
  if (matched >= min) return { passed: true };
  if (candidates.length === 0)
    return {
      passed: false,
      detail: `no ${check.ok ? 'successful ' : ''}call of ${check.tool}${where}`,
    };
  return {
    passed: false,
    detail: `${matched} of ${min} required call(s) of ${check.tool}${where} matched${firstMiss ? `; ${firstMiss}` : ''}`,
  };
}

/** A forbidden call: no executed call of the tool with matching arguments. */
export function evaluateNoCall(check: NoCallCheck, transcript: EpisodeTranscript): ItemResult {
  const hit = callsOf(transcript, check.turn).find(
    (c) => c.name === check.tool && executed(c) && matchArguments(check.args, c.arguments).ok,
  );
  return hit
    ? {
        passed: false,
        detail: `${check.tool} was called with ${JSON.stringify(hit.arguments).slice(0, 200)}`,
      }
    : { passed: true };
}

/** The answer of a user turn says what it should. */
export function evaluateAnswer(check: AnswerCheck, transcript: EpisodeTranscript): ItemResult {
  const index = check.turn ?? transcript.turns.length - 1;
  const answer = transcript.turns[index]?.answer;
  if (answer === undefined) {
    // Turns of a task are user messages; the trace's turns are acts (e1.t3): say which is meant.
    const which =
      transcript.turns.length > 1 || check.turn !== undefined
        ? ` to user message ${index + 1}`
        : '';
    const ended = transcript.ended;
    const how = ended
      ? `: the episode ended${ended.lastTurnId ? ` at turn ${ended.lastTurnId}` : ''} with ${ended.code}`
      : '';
    return { passed: false, detail: `no final answer${which}${how}` };
  }
  const problems: string[] = [];
  if (check.contains) {
    const found = check.contains.filter((t) => containsText(answer, t));
    const ok =
      (check.mode ?? 'all') === 'any' ? found.length > 0 : found.length === check.contains.length;
    if (!ok) {
      const missing = check.contains.filter((t) => !found.includes(t));
      problems.push(
        check.mode === 'any'
          ? `mentions none of ${JSON.stringify(check.contains)}`
          : `does not mention ${JSON.stringify(missing)}`,
      );
    }
  }
  for (const n of check.numbers ?? [])
    if (!statesNumber(answer, n)) problems.push(`does not state ${n}`);
  for (const t of check.notContains ?? [])
    if (containsText(answer, t)) problems.push(`mentions ${JSON.stringify(t)}`);
  return problems.length
    ? { passed: false, detail: `the answer ${problems.join('; ')}` }
    : { passed: true };
}
