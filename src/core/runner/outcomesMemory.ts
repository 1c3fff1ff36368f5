import { clipBytes } from '../base/clip';
import type { JsonValue } from '../base/json';
import { isJsonObject } from '../base/json';
import { isWriteTool } from '../env/writeTools';
import { actualValue } from '../fidelity/responseValue';
import { isRehearsalParseCode } from '../protocol/codes';
import { withoutIdentifiers } from '../protocol/identifierSlots';
import type { TranscriptCall } from '../tasks/checks/transcript';

/** At most this many lines in an outcomes memory, the last one counting those left out. */
export const MAX_OUTCOME_LINES = 12;
/** At most this many UTF-8 bytes in an outcomes memory (lines and their newlines). */
export const MAX_OUTCOMES_BYTES = 1200;
/** At most this many UTF-8 bytes of a refusal's reason. */
export const MAX_REASON_BYTES = 120;
/** At most this many UTF-8 bytes of a tool's name (the policy may invent any name). */
const MAX_TOOL_NAME_BYTES = 64;
/** Attempts named on the line of those that made no write; the rest are counted. */
const MAX_LISTED_ATTEMPTS = 8;

/** What a rehearsal said of one imagined call: it went through, it was refused (and why), or unknown. */
export type ImaginedOutcome =
  { kind: 'ok' } | { kind: 'refused'; reason?: string } | { kind: 'unknown' };

/**
 * The imagined outcome of a call in an imagined episode's transcript. `unknown` when nothing was
 * imagined: a rehearsal that did not parse (the simulator error the act read in its place, whose text
 * is never kept), a call that was never made (a call limit), a response that is not JSON. `refused`
 * when the imagined response is an error (a top-level `error` or `error_tool_call`, `isError`) or
 * says `ok: false` or `success: false`; else `ok`.
 */
export function imaginedOutcome(call: TranscriptCall): ImaginedOutcome {
  const response = call.outcome?.response;
  if (!response) return { kind: 'unknown' };
  const value = actualValue(response);
  if (value.kind !== 'json' || unparsedRehearsal(value.value)) return { kind: 'unknown' };
  const v = value.value;
  const refused =
    value.isError || (isJsonObject(v) && (v['ok'] === false || v['success'] === false));
  if (!refused) return { kind: 'ok' };
  const reason = reasonOf(v);
  return reason ? { kind: 'refused', reason } : { kind: 'refused' };
}

/** The tool message an imagined episode reads in place of a rehearsal that did not parse. */
function unparsedRehearsal(value: JsonValue): boolean {
  if (!isJsonObject(value)) return false;
  const failure = value['error_tool_call'];
  return (
    isJsonObject(failure) &&
    typeof failure['code'] === 'string' &&
    isRehearsalParseCode(failure['code'])
  );
}

/** A refusal's reason as the rehearsal gave it (its `error`, `message` or `reason` text), made plain. */
function reasonOf(value: JsonValue): string | undefined {
  if (!isJsonObject(value)) return undefined;
  const texts = (holder: JsonValue | undefined): (JsonValue | undefined)[] =>
    isJsonObject(holder) ? [holder['error'], holder['message'], holder['reason']] : [holder];
  for (const candidate of [
    ...texts(value['error']),
    ...texts(value['error_tool_call']),
    value['message'],
    value['reason'],
  ]) {
    if (typeof candidate !== 'string') continue;
    const reason = plainText(candidate, MAX_REASON_BYTES);
    if (reason) return reason;
  }
  return undefined;
}

/**
 * Outside text made fit for the memory: markup and JSON punctuation dropped, whitespace and control
 * characters made single spaces, cut to `maxBytes`, then every identifier replaced by a neutral word
 * (after the cut, which can make one: `C12345x` cut to `C12345…`).
 */
function plainText(text: string, maxBytes: number): string {
  const flat = text
    .replace(/<[^<>]*>/g, ' ')
    .replace(/[{}[\]"`\\<>]/g, ' ')
    .replace(/[\s\p{C}]+/gu, ' ')
    .trim();
  return withoutIdentifiers(clipBytes(flat, maxBytes)).trim();
}

/** One write's line before the whole-line pass: `Imagined transfer_between_accounts -> refused: account is frozen`. */
function outcomeLine(call: TranscriptCall): string {
  const tool = plainText(call.name, MAX_TOOL_NAME_BYTES) || 'an unnamed tool';
  const outcome = imaginedOutcome(call);
  const said =
    outcome.kind === 'refused' && outcome.reason ? `refused: ${outcome.reason}` : outcome.kind;
  return `Imagined ${tool} -> ${said}`;
}

/**
 * The line an imagined write makes in the memory when no other write made the same line (then the
 * line is written once, with a count: `... (x2)`). Holds no identifier.
 */
export function imaginedWriteLine(call: TranscriptCall): string {
  return withoutIdentifiers(outcomeLine(call));
}

/** The line naming the attempts (1-based) that made no write. */
function noWriteLine(attempts: readonly number[]): string {
  if (attempts.length === 1) return `Imagined attempt ${attempts[0]}: no write`;
  const listed = attempts.slice(0, MAX_LISTED_ATTEMPTS).join(', ');
  const more = attempts.length - MAX_LISTED_ATTEMPTS;
  return `Imagined attempts ${listed}${more > 0 ? ` and ${more} more` : ''}: no write`;
}

const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

/** A call of an imagined attempt; `callId` is the trace's, where the attempt was read from a trace. */
export type AttemptCall = TranscriptCall & { callId?: string };

/** One imagined attempt as the memory reads it: its calls, turn by turn (an episode's transcript is one). */
export interface ImaginedAttempt {
  turns: readonly { calls: readonly AttemptCall[] }[];
}

/** An imagined write behind a line: its attempt (1-based), its tool, and its call id when known. */
export interface LineCall {
  attempt: number;
  tool: string;
  callId?: string;
}

/** One line of an outcomes memory and what made it. */
export interface OutcomeLine {
  text: string;
  /**
   * The attempts (1-based, in the order they were played) behind the line: those whose writes it
   * counts, those it names as making no write, or, on the last line that counts the lines left
   * out, the attempts behind those lines.
   */
  attempts: number[];
  /** The imagined writes behind it, in the order they were played; none on the no-write line. */
  calls: LineCall[];
}

/** The lines within {@link MAX_OUTCOME_LINES} and {@link MAX_OUTCOMES_BYTES}, the last counting those left out. */
function bounded(lines: readonly OutcomeLine[]): OutcomeLine[] {
  const all = lines.map((l) => l.text).join('\n');
  if (lines.length <= MAX_OUTCOME_LINES && bytesOf(all) <= MAX_OUTCOMES_BYTES) return [...lines];
  const more = (n: number) => `(${n} more ${n === 1 ? 'line' : 'lines'})`;
  const kept: OutcomeLine[] = [];
  let used = 0;
  for (const line of lines) {
    const size = bytesOf(line.text) + 1;
    const after = lines.length - kept.length - 1;
    if (kept.length + 2 > MAX_OUTCOME_LINES) break;
    if (used + size + bytesOf(more(after)) > MAX_OUTCOMES_BYTES) break;
    kept.push(line);
    used += size;
  }
  const left = lines.slice(kept.length);
  const attempts = [...new Set(left.flatMap((l) => l.attempts))].sort((a, b) => a - b);
  return [...kept, { text: more(left.length), attempts, calls: left.flatMap((l) => l.calls) }];
}

/**
 * The lines of private rehearsal's `outcomes` memory ({@link outcomesMemory}), each with the attempts
 * and the imagined writes behind it: the runner joins their text into the memory, and the editor
 * shows which attempt contributed which line. One builder for both, so they cannot disagree.
 */
export function outcomesMemoryLines(
  attempts: readonly ImaginedAttempt[],
  readOnlyHints?: ReadonlyMap<string, boolean>,
): OutcomeLine[] {
  if (attempts.length === 0) return [{ text: 'No imagined attempt.', attempts: [], calls: [] }];
  // Keyed by the line before the whole-line pass, which the text of each line then gets.
  const lines = new Map<string, LineCall[]>();
  const noWrite: number[] = [];
  for (const [i, attempt] of attempts.entries()) {
    const writes = attempt.turns
      .flatMap((t) => t.calls)
      .filter((c) => isWriteTool(c.name, readOnlyHints));
    if (writes.length === 0) noWrite.push(i + 1);
    for (const c of writes) {
      const line = outcomeLine(c);
      const behind: LineCall = {
        attempt: i + 1,
        tool: c.name,
        ...(c.callId !== undefined ? { callId: c.callId } : {}),
      };
      lines.set(line, [...(lines.get(line) ?? []), behind]);
    }
  }
  // Each piece is already plain; the pass makes the promise hold for the joined line as a whole.
  const out: OutcomeLine[] = [...lines].map(([line, calls]) => ({
    text: withoutIdentifiers(calls.length > 1 ? `${line} (x${calls.length})` : line),
    attempts: [...new Set(calls.map((c) => c.attempt))],
    calls,
  }));
  if (noWrite.length)
    out.push({ text: withoutIdentifiers(noWriteLine(noWrite)), attempts: noWrite, calls: [] });
  return bounded(out);
}

/**
 * Private rehearsal's `outcomes` memory: one line per imagined write across the attempts (the tool,
 * `ok`, `refused` with the rehearsal's reason, or `unknown`), identical lines once with a count
 * (`(x2)`), then the attempts that made no write; bounded by {@link MAX_OUTCOME_LINES} and
 * {@link MAX_OUTCOMES_BYTES}. A write is a call of a tool {@link isWriteTool} says may change the
 * world (`readOnlyHints`: the environment's MCP hints).
 *
 * It holds no identifier and no argument, so it takes no identifier slot: the real conversation
 * after it is numbered as without it. Nor any text of a rehearsal that did not parse.
 */
export function outcomesMemory(
  attempts: readonly ImaginedAttempt[],
  readOnlyHints?: ReadonlyMap<string, boolean>,
): string {
  return outcomesMemoryLines(attempts, readOnlyHints)
    .map((l) => l.text)
    .join('\n');
}
