import { StudioError } from '../../base/errors';
import type { JsonValue } from '../../base/json';
import type { CallComparison } from '../../fidelity/compare';
import { compareResponses } from '../../fidelity/compare';
import type { ResponseValue } from '../../fidelity/responseValue';
import { actualValue, rehearsalValue } from '../../fidelity/responseValue';
import type {
  CallActualEvent,
  CallRehearsalEvent,
  FidelityEvent,
  TurnEvent,
} from '../format/schema';
import type { CallEntry } from './entries';
import type { TraceIndex } from './traceIndex';

/** Everything about one call that a diff view shows, read through the index. */
export interface CallView {
  entry: CallEntry;
  turn?: TurnEvent;
  rehearsal?: CallRehearsalEvent;
  actual?: CallActualEvent;
  rehearsalValue?: ResponseValue;
  actualValue?: ResponseValue;
  comparison: CallComparison;
}

/** The comparable value of a rehearsal event (undefined when it failed to parse). */
export function rehearsalValueOf(e: CallRehearsalEvent | undefined): ResponseValue | undefined {
  return e && e.result.ok ? rehearsalValue(e.result.value) : undefined;
}

/** The comparable value of an actual event (undefined when the tool never answered). */
export function actualValueOf(e: CallActualEvent | undefined): ResponseValue | undefined {
  return e?.response ? actualValue(e.response) : undefined;
}

/** Compares what is known of a call; says why not when one side is missing. */
export function compareCall(
  rehearsal: CallRehearsalEvent | undefined,
  actual: CallActualEvent | undefined,
): CallComparison {
  if (!rehearsal) return { comparable: 'none', reason: 'no-rehearsal' };
  if (!rehearsal.result.ok) return { comparable: 'none', reason: 'rehearsal-parse-error' };
  if (!actual) return { comparable: 'none', reason: 'no-actual' };
  const a = actualValueOf(actual);
  if (!a) return { comparable: 'none', reason: 'actual-error' };
  return compareResponses(rehearsalValue(rehearsal.result.value), a);
}

/** The arguments of a call, from its rehearsal or its turn. */
export function callArguments(
  view: Pick<CallView, 'entry' | 'turn' | 'rehearsal'>,
): JsonValue | undefined {
  if (view.rehearsal) return view.rehearsal.arguments;
  if (view.turn?.parse.kind === 'calls')
    return view.turn.parse.calls.find((c) => c.callId === view.entry.callId)?.arguments;
  return undefined;
}

/** Reads one call's events through the index and compares them. */
export async function loadCallView(index: TraceIndex, callId: string): Promise<CallView> {
  const entry = index.call(callId);
  if (!entry) {
    throw new StudioError(
      'UNKNOWN_CALL',
      `No call ${JSON.stringify(callId)} in ${index.file}. Run \`rehearse report --calls ${index.file}\` to list its calls.`,
    );
  }
  const turnEntry = index.turn(entry.turnId);
  const [turn, rehearsal, actual] = await Promise.all([
    turnEntry ? index.readEvent(turnEntry.location) : undefined,
    entry.rehearsal ? index.readEvent(entry.rehearsal) : undefined,
    entry.actual ? index.readEvent(entry.actual) : undefined,
  ]);
  const view: CallView = {
    entry,
    turn: turn as TurnEvent | undefined,
    rehearsal: rehearsal as CallRehearsalEvent | undefined,
    actual: actual as CallActualEvent | undefined,
    comparison: compareCall(
      rehearsal as CallRehearsalEvent | undefined,
      actual as CallActualEvent | undefined,
    ),
  };
  view.rehearsalValue = rehearsalValueOf(view.rehearsal);
  view.actualValue = actualValueOf(view.actual);
  return view;
}

/** The fidelity event of a call whose rehearsal and actual response are both recorded. */
export function fidelityEventFor(
  rehearsal: CallRehearsalEvent,
  actual: CallActualEvent,
): Omit<FidelityEvent, 'v' | 'ts'> {
  const cmp = compareCall(rehearsal, actual);
  const base = {
    type: 'fidelity' as const,
    episodeId: rehearsal.episodeId,
    callId: rehearsal.callId,
  };
  if (cmp.comparable === 'none') return { ...base, comparable: 'none', reason: cmp.reason };
  if (cmp.comparable === 'json')
    return { ...base, comparable: 'json', scores: cmp.scores, counts: cmp.counts };
  return { ...base, comparable: 'text', scores: cmp.scores };
}
