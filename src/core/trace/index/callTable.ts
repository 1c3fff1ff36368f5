import type { FidelityScores } from '../../fidelity/scores';
import type { DiffKind } from '../../fidelity/structuralDiff';
import type { EventLocation } from '../format/reader';
import type { CallEntry } from './entries';
import type { EpisodeTable } from './episodeTable';
import { NumberedTexts } from './numberedTexts';
import { growColumns } from './columns';
import type { TurnTable } from './turnTable';

/** What ranks a call by fidelity and sums up a set of calls: its errors and scores. */
export type CallOutcome = Pick<CallEntry, 'rehearsalError' | 'actualError' | 'scores'>;

/** The events of a call whose byte location the table keeps. */
export type CallEventKind = 'rehearsal' | 'actual' | 'fidelity';
export const EVENT_KINDS: readonly CallEventKind[] = ['rehearsal', 'actual', 'fidelity'];

export const COMPARABLE: readonly (CallEntry['comparable'] | undefined)[] = [
  undefined,
  'json',
  'text',
  'none',
];

const FIRST_CAPACITY = 1024;

/** The table's columns of one value per call (grown together; saved and restored by the index snapshot), besides the per-event-kind locations. */
export const CALL_COLUMNS = [
  'turnRows',
  'tools',
  'rehearsalErrors',
  'actualErrors',
  'indexes',
  'actualIsError',
  'comparable',
  'scores',
  'counts',
] as const;
/** The per-event-kind location columns: one array per kind in {@link EVENT_KINDS}. */
export const LOCATION_COLUMNS = ['lines', 'offsets', 'lengths'] as const;

/**
 * The calls of a trace index in columns (typed arrays: each call's turn row, position, byte
 * locations, and numbers for its tool, error codes, scores and diff counts) rather than an object
 * per call: a million-call trace would otherwise hold hundreds of megabytes of small objects. A
 * call's {@link CallEntry} is built when asked for. Rows keep the order in which calls were first seen.
 */
export class CallTable {
  /** Rows of the calls whose id is not the one their turn and position give (see {@link idOf}). */
  private readonly rows = new Map<string, number>();
  private size = 0;
  private capacity = 0;
  /**
   * The ids that are not `<turn id>.c<position + 1>`, by row. The runner names every call that way, so
   * a trace it wrote keeps no call id string at all: a million of them, and the map from id to row,
   * would hold about a hundred megabytes.
   */
  readonly explicitIds = new Map<number, string>();
  // The columns below are exposed read-only to the index snapshot.
  /** Tool names and error codes, numbered: a call keeps their numbers (0 is none), not a pointer each. */
  readonly texts = new NumberedTexts();
  /**
   * Distinct fidelity score sets and diff counts; a call keeps the number of its own (`n` is
   * `scoreSets[n - 1]`; 0: none). A million calls have a few distinct sets, and a pointer each
   * would hold 16 MB.
   */
  readonly scoreSets: FidelityScores[] = [];
  readonly countSets: Record<DiffKind, number>[] = [];
  private readonly scoreKeys = new Map<string, number>();
  private readonly countKeys = new Map<string, number>();
  scores = new Uint32Array(0);
  counts = new Uint32Array(0);
  /** The turn table row of each call's turn (its turn id and episode id are that turn's). */
  turnRows = new Int32Array(0);
  tools = new Uint32Array(0);
  rehearsalErrors = new Uint32Array(0);
  actualErrors = new Uint32Array(0);
  indexes = new Int32Array(0);
  /** 0: no actual event yet; 1: not an error result; 2: an error result. */
  actualIsError = new Uint8Array(0);
  /** Index into COMPARABLE. */
  comparable = new Uint8Array(0);
  /** Per event kind: line (0 when the call has no such event), byte offset, length. */
  lines = EVENT_KINDS.map(() => new Uint32Array(0));
  offsets = EVENT_KINDS.map(() => new Float64Array(0));
  lengths = EVENT_KINDS.map(() => new Uint32Array(0));

  /** `turns` and `episodes` name each call's turn and episode. */
  constructor(
    private readonly turns: TurnTable,
    private readonly episodes: EpisodeTable,
  ) {}

  /** Number of calls. */
  get count(): number {
    return this.size;
  }

  /** The row of a call, or undefined. */
  row(callId: string): number | undefined {
    const explicit = this.rows.get(callId);
    if (explicit !== undefined) return explicit;
    // `<turn id>.c<n>`: the call at position n - 1 of that turn, if its id is the one it derives.
    const dot = callId.lastIndexOf('.c');
    if (dot <= 0) return undefined;
    const n = callId.slice(dot + 2);
    const position = Number(n) - 1;
    if (!/^[1-9][0-9]{0,8}$/.test(n)) return undefined;
    const turnRow = this.turns.row(callId.slice(0, dot));
    if (turnRow === undefined) return undefined;
    return this.turns.findCallRow(
      turnRow,
      (row) =>
        this.indexes[row] === position &&
        this.turnRows[row] === turnRow &&
        !this.explicitIds.has(row),
    );
  }

  /** The id of a call. */
  idOf(row: number): string {
    return this.explicitIds.get(row) ?? this.derivedId(row);
  }

  /** Call ids in row order (made at each call: keep the array while it is needed, not the table's). */
  ids(): string[] {
    const ids = new Array<string>(this.size);
    for (let r = 0; r < this.size; r++) ids[r] = this.idOf(r);
    return ids;
  }

  /**
   * Marks a call as no longer found through its turn's list (its turn was listed again without it):
   * its id is kept explicitly, so that it is still found by id.
   */
  keepId(row: number): void {
    if (this.explicitIds.has(row)) return;
    const id = this.derivedId(row);
    this.explicitIds.set(row, id);
    this.rows.set(id, row);
  }

  private derivedId(row: number): string {
    return `${this.turns.idOf(this.turnRows[row])}.c${this.indexes[row] + 1}`;
  }

  /** Adds a call, or updates the identity of a known one (a turn listing it again); returns its row. */
  put(callId: string, turnRow: number, tool: string, index: number): number {
    let row = this.row(callId);
    if (row === undefined) {
      row = this.size++;
      if (row === this.capacity) this.grow(Math.max(FIRST_CAPACITY, this.capacity * 2));
    } else if (this.explicitIds.delete(row)) {
      this.rows.delete(callId);
    }
    this.turnRows[row] = turnRow;
    this.tools[row] = this.texts.number(tool);
    this.indexes[row] = index;
    if (this.derivedId(row) !== callId) {
      this.explicitIds.set(row, callId);
      this.rows.set(callId, row);
    }
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
    this.rehearsalErrors[row] = code === undefined ? 0 : this.texts.number(code);
  }

  /** Records the actual call's error code (or its absence) and whether the tool answered with an error. */
  setActualOutcome(row: number, code: string | undefined, isError: boolean): void {
    this.actualErrors[row] = code === undefined ? 0 : this.texts.number(code);
    this.actualIsError[row] = isError ? 2 : 1;
  }

  /** Records what the fidelity event says; scores and counts absent from it keep earlier ones. */
  setFidelity(
    row: number,
    comparable: NonNullable<CallEntry['comparable']>,
    scores: FidelityScores | undefined,
    counts: Record<DiffKind, number> | undefined,
  ): void {
    this.comparable[row] = COMPARABLE.indexOf(comparable);
    if (scores)
      this.scores[row] = numbered(this.scoreSets, this.scoreKeys, scoreKey(scores), scores);
    if (counts)
      this.counts[row] = numbered(this.countSets, this.countKeys, countKey(counts), counts);
  }

  /** The turn table row of a call's turn. */
  turnRowOf(row: number): number {
    return this.turnRows[row];
  }

  /**
   * The entry of a row, built from the columns: fields the call has no value for are absent.
   * Without `locations`, the events' byte locations are left out too (cheaper, to rank or filter
   * many calls).
   */
  entry(row: number, locations = true): CallEntry {
    const turnRow = this.turnRows[row];
    const entry: CallEntry = {
      callId: this.idOf(row),
      turnId: this.turns.idOf(turnRow),
      episodeId: this.episodes.ids.idOf(this.turns.episodeRows[turnRow]),
      tool: this.texts.text(this.tools[row]),
      index: this.indexes[row],
    };
    // Named stores, not a loop over the kinds: entries are built by the hundred thousand (a sort by
    // fidelity builds every call's), and computed keys make that several times slower.
    if (locations) this.addLocations(entry, row);
    if (this.rehearsalErrors[row] > 0)
      entry.rehearsalError = this.texts.text(this.rehearsalErrors[row]);
    if (this.actualErrors[row] > 0) entry.actualError = this.texts.text(this.actualErrors[row]);
    if (this.actualIsError[row] > 0) entry.actualIsError = this.actualIsError[row] === 2;
    const comparable = COMPARABLE[this.comparable[row]];
    if (comparable) entry.comparable = comparable;
    if (this.scores[row] > 0) entry.scores = this.scoreSets[this.scores[row] - 1];
    if (this.counts[row] > 0) entry.counts = this.countSets[this.counts[row] - 1];
    return entry;
  }

  /** Fills `o` with a row's outcome: its rehearsal and actual error codes and its scores (each undefined when absent). */
  outcomeInto(row: number, o: CallOutcome): void {
    o.rehearsalError =
      this.rehearsalErrors[row] > 0 ? this.texts.text(this.rehearsalErrors[row]) : undefined;
    o.actualError =
      this.actualErrors[row] > 0 ? this.texts.text(this.actualErrors[row]) : undefined;
    o.scores = this.scores[row] > 0 ? this.scoreSets[this.scores[row] - 1] : undefined;
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
    return line > 0
      ? { line, offset: this.offsets[kind][row], length: this.lengths[kind][row] }
      : undefined;
  }

  /** Forgets every call. */
  clear(): void {
    this.rows.clear();
    this.size = 0;
    this.explicitIds.clear();
    this.texts.clear();
    this.scoreSets.length = 0;
    this.countSets.length = 0;
    this.scoreKeys.clear();
    this.countKeys.clear();
    this.grow(0);
  }

  /**
   * Replaces the table's content with what an index snapshot holds: ids, texts, scores and counts
   * as arrays, the other columns as typed arrays, all of the same number of rows.
   */
  restore(
    count: number,
    explicitIds: Iterable<[number, string]>,
    data: { texts: readonly string[] } & Pick<
      CallTable,
      | 'scoreSets'
      | 'countSets'
      | 'scores'
      | 'counts'
      | 'turnRows'
      | 'tools'
      | 'rehearsalErrors'
      | 'actualErrors'
      | 'indexes'
      | 'actualIsError'
      | 'comparable'
      | 'lines'
      | 'offsets'
      | 'lengths'
    >,
  ): void {
    this.clear();
    this.size = this.capacity = count;
    for (const [row, id] of explicitIds) {
      if (row >= count || this.explicitIds.has(row) || this.rows.has(id))
        throw new Error('bad explicit call id');
      this.explicitIds.set(row, id);
      this.rows.set(id, row);
    }
    this.texts.restore(data.texts);
    for (const s of data.scoreSets) numbered(this.scoreSets, this.scoreKeys, scoreKey(s), s, true);
    for (const c of data.countSets) numbered(this.countSets, this.countKeys, countKey(c), c, true);
    for (const key of [...CALL_COLUMNS, ...LOCATION_COLUMNS])
      (this as Record<string, unknown>)[key] = data[key];
  }

  private grow(capacity: number): void {
    this.capacity = capacity;
    growColumns(this, CALL_COLUMNS, capacity);
    for (const key of LOCATION_COLUMNS)
      growColumns(
        this[key],
        EVENT_KINDS.map((_, k) => k),
        capacity,
      );
  }
}

/** Distinct values looked up by key; past this, new values are added as they come (a trace of ever-different scores). */
const MAX_KEYED = 4096;

const scoreKey = (s: FidelityScores) =>
  `${s.exactMatch}|${s.fieldF1}|${s.keyJaccard}|${s.typeAgreement}|${s.errorAgreement}|${Object.keys(s).length}`;
const countKey = (c: Record<DiffKind, number>) =>
  `${c.added}|${c.removed}|${c.changed}|${c.typeChanged}|${Object.keys(c).length}`;

/**
 * The number (from 1) of a value in a table of distinct values, adding it when new (`append`: always
 * added, as a restored table is taken as it was saved).
 */
function numbered<T>(
  table: T[],
  keys: Map<string, number>,
  key: string,
  value: T,
  append = false,
): number {
  let n = append ? undefined : keys.get(key);
  if (n === undefined) {
    table.push(value);
    n = table.length;
    if (keys.size < MAX_KEYED && !keys.has(key)) keys.set(key, n);
  }
  return n;
}
