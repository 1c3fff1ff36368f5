import { growColumns } from './columns';
import { IdTable } from './idTable';
import type { EventLocation } from '../format/reader';
import type { TurnEntry } from './entries';

/** Turn kinds by their code in the table. */
export const TURN_KINDS: readonly TurnEntry['kind'][] = ['calls', 'final', 'error'];

const FIRST_CAPACITY = 1024;

/** The table's columns of one value per turn (grown together; saved and restored by the index snapshot). */
export const TURN_COLUMNS = [
  'episodeRows',
  'indexes',
  'kinds',
  'lines',
  'offsets',
  'lengths',
  'callStarts',
  'callCounts',
  'completionTokens',
  'latencies',
] as const;

/**
 * The turns of a trace index in columns, like {@link CallTable}: half a million turn objects, each
 * with a location object and a call list, would hold a hundred megabytes. A turn's calls are kept as
 * a range of call rows (a turn's calls are first seen together), with a list only for a turn whose
 * calls are not one range (a replayed call attached later, a turn listed again). A turn's
 * {@link TurnEntry} is built when asked for.
 */
export class TurnTable {
  private capacity = 0;
  /** Columns exposed read-only to the index snapshot. */
  readonly ids = new IdTable();
  /** The episode table row of each turn. */
  episodeRows = new Int32Array(0);
  /** Sparse: the act parse error code of `error` turns, and the answer preview of `final` turns. */
  readonly parseErrors = new Map<number, string>();
  readonly answerPreviews = new Map<number, string>();
  /** Sparse: the call rows of a turn whose calls are not the range `callStart .. callStart + callCount`. */
  readonly callLists = new Map<number, number[]>();
  indexes = new Int32Array(0);
  kinds = new Uint8Array(0);
  lines = new Uint32Array(0);
  offsets = new Float64Array(0);
  lengths = new Uint32Array(0);
  callStarts = new Int32Array(0);
  callCounts = new Int32Array(0);
  /** The act's completion tokens and generation time (ms) as its turn event recorded them; NaN when not. */
  completionTokens = new Float64Array(0);
  latencies = new Float64Array(0);

  /** Number of turns. */
  get count(): number {
    return this.ids.count;
  }

  /** The row of a turn, or undefined. */
  row(turnId: string): number | undefined {
    return this.ids.get(turnId);
  }

  /** The id of a turn. */
  idOf(row: number): string {
    return this.ids.idOf(row);
  }

  /**
   * Adds a turn, or replaces what is known of a turn listed again (its calls are then the new
   * event's); returns its row.
   */
  put(
    turnId: string,
    episodeRow: number,
    index: number,
    location: EventLocation,
    kind: TurnEntry['kind'],
    completionTokens = Number.NaN,
    latencyMs = Number.NaN,
  ): number {
    let row = this.ids.get(turnId);
    if (row === undefined) {
      row = this.ids.add(turnId);
      if (row >= this.capacity) this.grow(Math.max(FIRST_CAPACITY, this.capacity * 2));
    } else {
      this.parseErrors.delete(row);
      this.answerPreviews.delete(row);
      this.callLists.delete(row);
    }
    this.episodeRows[row] = episodeRow;
    this.indexes[row] = index;
    this.kinds[row] = TURN_KINDS.indexOf(kind);
    this.lines[row] = location.line;
    this.offsets[row] = location.offset;
    this.lengths[row] = location.length;
    this.callStarts[row] = -1;
    this.callCounts[row] = 0;
    this.completionTokens[row] = completionTokens;
    this.latencies[row] = latencyMs;
    return row;
  }

  /** Appends a call row to a turn's calls. */
  addCall(row: number, callRow: number): void {
    const list = this.callLists.get(row);
    if (list) {
      list.push(callRow);
      return;
    }
    const count = this.callCounts[row];
    if (count === 0) {
      this.callStarts[row] = callRow;
      this.callCounts[row] = 1;
      return;
    }
    if (this.callStarts[row] + count === callRow) {
      this.callCounts[row] = count + 1;
      return;
    }
    const rows: number[] = [];
    for (let i = 0; i < count; i++) rows.push(this.callStarts[row] + i);
    rows.push(callRow);
    this.callLists.set(row, rows);
  }

  /** The call rows of a turn, in the order it lists them. */
  callRows(row: number): number[] {
    const rows: number[] = [];
    this.findCallRow(row, (r) => {
      rows.push(r);
      return false;
    });
    return rows;
  }

  /** The first of a turn's call rows (in the order it lists them) that passes `test`, without making a list. */
  findCallRow(row: number, test: (callRow: number) => boolean): number | undefined {
    const list = this.callLists.get(row);
    if (list) return list.find(test);
    for (let r = this.callStarts[row], end = r + this.callCounts[row]; r < end; r++)
      if (test(r)) return r;
    return undefined;
  }

  /** Number of calls a turn lists. */
  callCount(row: number): number {
    return this.callLists.get(row)?.length ?? this.callCounts[row];
  }

  /** The entry of a row; `episodeId` names its episode and `callIds` its calls. */
  entry(row: number, episodeId: string, callIds: string[]): TurnEntry {
    const turn: TurnEntry = {
      turnId: this.ids.idOf(row),
      episodeId,
      index: this.indexes[row],
      location: { line: this.lines[row], offset: this.offsets[row], length: this.lengths[row] },
      kind: TURN_KINDS[this.kinds[row]],
      callIds,
    };
    const parseError = this.parseErrors.get(row);
    if (parseError !== undefined) turn.parseError = parseError;
    const preview = this.answerPreviews.get(row);
    if (preview !== undefined) turn.answerPreview = preview;
    return turn;
  }

  /** Forgets every turn. */
  clear(): void {
    this.capacity = 0;
    this.ids.clear();
    this.parseErrors.clear();
    this.answerPreviews.clear();
    this.callLists.clear();
    this.grow(0);
  }

  /**
   * Replaces the table's content with what an index snapshot holds: the ids, and columns of exactly
   * one value per id. Throws on ids that do not check out.
   */
  restore(
    ids: { bytes: Buffer; starts: Float64Array; lengths: Uint8Array },
    columns: Pick<TurnTable, (typeof TURN_COLUMNS)[number]>,
  ): void {
    this.clear();
    this.ids.restore(ids.bytes, ids.starts, ids.lengths);
    this.capacity = this.ids.count;
    Object.assign(this, columns);
  }

  private grow(capacity: number): void {
    this.capacity = capacity;
    growColumns(this, TURN_COLUMNS, capacity);
  }
}
