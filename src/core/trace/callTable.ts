import type { FidelityScores } from '../fidelity/scores';
import type { DiffKind } from '../fidelity/structuralDiff';
import type { EventLocation } from './reader';
import type { CallEntry } from './traceIndex';

/** The events of a call whose byte location the table keeps. */
export type CallEventKind = 'rehearsal' | 'actual' | 'fidelity';
const EVENT_KINDS: readonly CallEventKind[] = ['rehearsal', 'actual', 'fidelity'];

const COMPARABLE: readonly (CallEntry['comparable'] | undefined)[] = [undefined, 'json', 'text', 'none'];

const FIRST_CAPACITY = 1024;

/**
 * The calls of a trace index in columns (typed arrays of numbers, arrays of shared strings and
 * objects) rather than an object per call: a million-call trace would otherwise hold hundreds of
 * megabytes of small objects. A call's {@link CallEntry} is built when asked for. Rows keep the
 * order in which calls were first seen.
 */
export class CallTable {
  private readonly rows = new Map<string, number>();
  private size = 0;
  private capacity = 0;
  private readonly callIds: string[] = [];
  private readonly turnIds: string[] = [];
  private readonly episodeIds: string[] = [];
  private readonly tools: string[] = [];
  private readonly rehearsalErrors: (string | undefined)[] = [];
  private readonly actualErrors: (string | undefined)[] = [];
  private readonly scores: (FidelityScores | undefined)[] = [];
  private readonly counts: (Record<DiffKind, number> | undefined)[] = [];
  private indexes = new Int32Array(0);
  /** 0: no actual event yet; 1: not an error result; 2: an error result. */
  private actualIsError = new Uint8Array(0);
  /** Index into COMPARABLE. */
  private comparable = new Uint8Array(0);
  /** Per event kind: line (0 when the call has no such event), byte offset, length. */
  private lines = EVENT_KINDS.map(() => new Uint32Array(0));
  private offsets = EVENT_KINDS.map(() => new Float64Array(0));
  private lengths = EVENT_KINDS.map(() => new Uint32Array(0));

  /** Number of calls. */
  get count(): number {
    return this.size;
  }

  /** The row of a call, or undefined. */
  row(callId: string): number | undefined {
    return this.rows.get(callId);
  }

  /** Call ids in row order. */
  ids(): readonly string[] {
    return this.callIds;
  }

  /** Adds a call, or updates the identity of a known one (a turn listing it again); returns its row. */
  put(callId: string, turnId: string, episodeId: string, tool: string, index: number): number {
    let row = this.rows.get(callId);
    if (row === undefined) {
      row = this.size++;
      if (row === this.capacity) this.grow();
      this.rows.set(callId, row);
      this.callIds.push(callId);
      this.turnIds.push(turnId);
      this.episodeIds.push(episodeId);
      this.tools.push(tool);
      this.rehearsalErrors.push(undefined);
      this.actualErrors.push(undefined);
      this.scores.push(undefined);
      this.counts.push(undefined);
    } else {
      this.turnIds[row] = turnId;
      this.episodeIds[row] = episodeId;
      this.tools[row] = tool;
    }
    this.indexes[row] = index;
    return row;
  }

  /** Records where one of the call's events lies. */
  setLocation(row: number, kind: CallEventKind, location: EventLocation): void {
    const k = EVENT_KINDS.indexOf(kind);
    this.lines[k][row] = location.line;
    this.offsets[k][row] = location.offset;
    this.lengths[k][row] = location.length;
  }

  /** Records the rehearsal's parse error code, or its absence. */
  setRehearsalError(row: number, code: string | undefined): void {
    this.rehearsalErrors[row] = code;
  }

  /** Records the actual call's error code (or its absence) and whether the tool answered with an error. */
  setActualOutcome(row: number, code: string | undefined, isError: boolean): void {
    this.actualErrors[row] = code;
    this.actualIsError[row] = isError ? 2 : 1;
  }

  /** Records what the fidelity event says; scores and counts absent from it keep earlier ones. */
  setFidelity(row: number, comparable: NonNullable<CallEntry['comparable']>, scores: FidelityScores | undefined, counts: Record<DiffKind, number> | undefined): void {
    this.comparable[row] = COMPARABLE.indexOf(comparable);
    if (scores) this.scores[row] = scores;
    if (counts) this.counts[row] = counts;
  }

  /** The turn id of a row. */
  turnIdOf(row: number): string {
    return this.turnIds[row];
  }

  /**
   * The entry of a row, built from the columns: fields the call has no value for are absent.
   * Without `locations`, the events' byte locations are left out too (cheaper, to rank or filter
   * many calls).
   */
  entry(row: number, locations = true): CallEntry {
    const entry: CallEntry = { callId: this.callIds[row], turnId: this.turnIds[row], episodeId: this.episodeIds[row], tool: this.tools[row], index: this.indexes[row] };
    // Named stores, not a loop over the kinds: entries are built by the hundred thousand (a sort by
    // fidelity builds every call's), and computed keys make that several times slower.
    if (locations) this.addLocations(entry, row);
    const rehearsalError = this.rehearsalErrors[row];
    if (rehearsalError !== undefined) entry.rehearsalError = rehearsalError;
    const actualError = this.actualErrors[row];
    if (actualError !== undefined) entry.actualError = actualError;
    if (this.actualIsError[row] > 0) entry.actualIsError = this.actualIsError[row] === 2;
    const comparable = COMPARABLE[this.comparable[row]];
    if (comparable) entry.comparable = comparable;
    const scores = this.scores[row];
    if (scores) entry.scores = scores;
    const counts = this.counts[row];
    if (counts) entry.counts = counts;
    return entry;
  }

  private addLocations(entry: CallEntry, row: number): void {
    const rehearsal = this.location(0, row);
    if (rehearsal) entry.rehearsal = rehearsal;
    const actual = this.location(1, row);
    if (actual) entry.actual = actual;
    const fidelity = this.location(2, row);
    if (fidelity) entry.fidelity = fidelity;
  }

  private location(kind: number, row: number): EventLocation | undefined {
    const line = this.lines[kind][row];
    return line > 0 ? { line, offset: this.offsets[kind][row], length: this.lengths[kind][row] } : undefined;
  }

  /** Forgets every call. */
  clear(): void {
    this.rows.clear();
    this.size = 0;
    this.capacity = 0;
    for (const list of [this.callIds, this.turnIds, this.episodeIds, this.tools, this.rehearsalErrors, this.actualErrors, this.scores, this.counts]) list.length = 0;
    this.indexes = new Int32Array(0);
    this.actualIsError = new Uint8Array(0);
    this.comparable = new Uint8Array(0);
    this.lines = EVENT_KINDS.map(() => new Uint32Array(0));
    this.offsets = EVENT_KINDS.map(() => new Float64Array(0));
    this.lengths = EVENT_KINDS.map(() => new Uint32Array(0));
  }

  private grow(): void {
    this.capacity = Math.max(FIRST_CAPACITY, this.capacity * 2);
    this.indexes = grown(this.indexes, new Int32Array(this.capacity));
    this.actualIsError = grown(this.actualIsError, new Uint8Array(this.capacity));
    this.comparable = grown(this.comparable, new Uint8Array(this.capacity));
    this.lines = this.lines.map((a) => grown(a, new Uint32Array(this.capacity)));
    this.offsets = this.offsets.map((a) => grown(a, new Float64Array(this.capacity)));
    this.lengths = this.lengths.map((a) => grown(a, new Uint32Array(this.capacity)));
  }
}

function grown<T extends Int32Array | Uint32Array | Uint8Array | Float64Array>(old: T, next: T): T {
  next.set(old as never);
  return next;
}
