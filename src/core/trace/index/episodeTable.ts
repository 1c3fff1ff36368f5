import { IdTable } from './idTable';
import { NumberedTexts } from './numberedTexts';
import type { EventLocation } from '../format/reader';
import type { EpisodeEntry } from './entries';
import { grown, growColumns } from './columns';

const FIRST_CAPACITY = 256;

/** The table's columns of one value per episode (grown together; saved and restored by the index snapshot). */
export const EPISODE_COLUMNS = [
  'indexes',
  'modes',
  'roles',
  'lines',
  'offsets',
  'lengths',
  'firstTurns',
  'lastTurns',
  'ends',
  'statuses',
  'rewards',
  'successes',
  'endLines',
  'endOffsets',
  'endLengths',
  'endErrors',
  'startTimes',
  'endTimes',
] as const satisfies readonly (keyof EpisodeColumns)[];

/** The columns of an {@link EpisodeTable} (an index snapshot saves and restores them). */
export interface EpisodeColumns {
  indexes: Int32Array;
  modes: Uint32Array;
  roles: Uint32Array;
  lines: Uint32Array;
  offsets: Float64Array;
  lengths: Uint32Array;
  firstTurns: Int32Array;
  lastTurns: Int32Array;
  /** 0: no end yet; 1: ended with a reward; 2: ended with a null reward. */
  ends: Uint8Array;
  statuses: Uint32Array;
  rewards: Float64Array;
  /** 0: null; 1: false; 2: true. */
  successes: Uint8Array;
  endLines: Uint32Array;
  endOffsets: Float64Array;
  endLengths: Uint32Array;
  endErrors: Uint32Array;
  /** When the episode started and ended (ms since the epoch, from the events' `ts`; NaN when unknown). */
  startTimes: Float64Array;
  endTimes: Float64Array;
}

/**
 * The episodes of a trace index in columns, like the turn and call tables: ids in an
 * {@link IdTable}, modes, roles, statuses and error codes as numbers, and each episode's turns as a
 * chain through the turn rows (`nextTurns`, in the order the trace introduced them). An
 * {@link EpisodeEntry} is built when asked for. An episode id introduced twice keeps one row: the
 * later event's fields replace the earlier's, its turns are kept.
 */
export class EpisodeTable implements EpisodeColumns {
  readonly ids = new IdTable();
  readonly taskIds: string[] = [];
  /** Modes, roles, statuses and error codes, numbered (0: none). */
  readonly texts = new NumberedTexts();
  /** Per turn row: the next turn of its episode, -1 at the last. */
  nextTurns: Int32Array = new Int32Array(0);
  indexes = new Int32Array(0);
  modes = new Uint32Array(0);
  roles = new Uint32Array(0);
  lines = new Uint32Array(0);
  offsets = new Float64Array(0);
  lengths = new Uint32Array(0);
  firstTurns = new Int32Array(0);
  lastTurns = new Int32Array(0);
  ends = new Uint8Array(0);
  statuses = new Uint32Array(0);
  rewards = new Float64Array(0);
  successes = new Uint8Array(0);
  endLines = new Uint32Array(0);
  endOffsets = new Float64Array(0);
  endLengths = new Uint32Array(0);
  endErrors = new Uint32Array(0);
  startTimes = new Float64Array(0);
  endTimes = new Float64Array(0);

  get count(): number {
    return this.ids.count;
  }

  /** The row of an episode, or undefined. */
  row(episodeId: string): number | undefined {
    return this.ids.get(episodeId);
  }

  /** Adds an episode, or replaces what is known of one introduced again (keeping its turns); returns its row. */
  put(
    episodeId: string,
    index: number,
    taskId: string,
    mode: string,
    role: string | undefined,
    location: EventLocation,
    startedMs = Number.NaN,
  ): number {
    let row = this.ids.get(episodeId);
    if (row === undefined) {
      row = this.ids.add(episodeId);
      if (row >= this.indexes.length) this.grow(Math.max(FIRST_CAPACITY, this.indexes.length * 2));
      this.taskIds.push(taskId);
      this.firstTurns[row] = -1;
      this.lastTurns[row] = -1;
    } else {
      this.taskIds[row] = taskId;
    }
    this.indexes[row] = index;
    this.modes[row] = this.texts.number(mode);
    this.roles[row] = role === undefined ? 0 : this.texts.number(role);
    this.lines[row] = location.line;
    this.offsets[row] = location.offset;
    this.lengths[row] = location.length;
    this.startTimes[row] = startedMs;
    return row;
  }

  /** Appends a new turn row to an episode's turns. */
  addTurn(row: number, turnRow: number): void {
    if (turnRow >= this.nextTurns.length)
      this.nextTurns = grown(
        this.nextTurns,
        Math.max(FIRST_CAPACITY * 4, this.nextTurns.length * 2, turnRow + 1),
      );
    this.nextTurns[turnRow] = -1;
    if (this.lastTurns[row] < 0) this.firstTurns[row] = turnRow;
    else this.nextTurns[this.lastTurns[row]] = turnRow;
    this.lastTurns[row] = turnRow;
  }

  /** The turn rows of an episode, in the order the trace introduced them. */
  turnRows(row: number): number[] {
    const rows: number[] = [];
    // Bounded by the number of turns: a damaged chain read from a snapshot cannot loop forever.
    for (
      let t = this.firstTurns[row], k = 0;
      t >= 0 && k < this.nextTurns.length;
      t = this.nextTurns[t], k++
    )
      rows.push(t);
    return rows;
  }

  /** Records how an episode ended. */
  setEnd(row: number, end: NonNullable<EpisodeEntry['end']>, endedMs = Number.NaN): void {
    this.endTimes[row] = endedMs;
    this.ends[row] = end.reward === null ? 2 : 1;
    this.statuses[row] = this.texts.number(end.status);
    this.rewards[row] = end.reward ?? 0;
    this.successes[row] = end.success === null ? 0 : end.success ? 2 : 1;
    this.endLines[row] = end.location.line;
    this.endOffsets[row] = end.location.offset;
    this.endLengths[row] = end.location.length;
    this.endErrors[row] = end.errorCode === undefined ? 0 : this.texts.number(end.errorCode);
  }

  /** The entry of a row; `turnIds` names its turns. */
  entry(row: number, turnIds: string[]): EpisodeEntry {
    const entry: EpisodeEntry = {
      episodeId: this.ids.idOf(row),
      index: this.indexes[row],
      taskId: this.taskIds[row],
      mode: this.texts.text(this.modes[row]) as EpisodeEntry['mode'],
      location: { line: this.lines[row], offset: this.offsets[row], length: this.lengths[row] },
      turnIds,
    };
    if (this.roles[row] > 0) entry.role = this.texts.text(this.roles[row]) as EpisodeEntry['role'];
    const duration = this.endTimes[row] - this.startTimes[row];
    if (this.ends[row] > 0 && Number.isFinite(duration) && duration >= 0)
      entry.durationMs = duration;
    if (this.ends[row] > 0) {
      entry.end = {
        status: this.texts.text(this.statuses[row]) as NonNullable<EpisodeEntry['end']>['status'],
        reward: this.ends[row] === 2 ? null : this.rewards[row],
        success: this.successes[row] === 0 ? null : this.successes[row] === 2,
        location: {
          line: this.endLines[row],
          offset: this.endOffsets[row],
          length: this.endLengths[row],
        },
      };
      if (this.endErrors[row] > 0) entry.end.errorCode = this.texts.text(this.endErrors[row]);
    }
    return entry;
  }

  clear(): void {
    this.ids.clear();
    this.taskIds.length = 0;
    this.texts.clear();
    this.nextTurns = new Int32Array(0);
    this.grow(0);
  }

  /**
   * Replaces the content with what an index snapshot holds (columns of exactly `ids.count` rows;
   * `nextTurns` one per turn row). Throws on values out of range.
   */
  restore(
    ids: { bytes: Buffer; starts: Float64Array; lengths: Uint8Array },
    taskIds: string[],
    texts: string[],
    nextTurns: Int32Array,
    columns: EpisodeColumns,
  ): void {
    this.clear();
    this.ids.restore(ids.bytes, ids.starts, ids.lengths);
    const n = this.ids.count;
    const bad = (what: string) => {
      throw new Error(`bad episode ${what}`);
    };
    if (
      taskIds.length !== n ||
      Object.values(columns).some((c: ArrayLike<number>) => c.length !== n)
    )
      bad('columns');
    if (texts[0] !== '') bad('texts');
    for (const [k, list] of [
      ['mode', columns.modes],
      ['role', columns.roles],
      ['status', columns.statuses],
      ['error', columns.endErrors],
    ] as const) {
      for (let i = 0; i < n; i++)
        if (list[i] >= texts.length || (k === 'mode' && list[i] === 0)) bad(k);
    }
    for (let i = 0; i < n; i++) {
      if (columns.ends[i] > 2 || columns.successes[i] > 2) bad('end');
      for (const t of [columns.firstTurns[i], columns.lastTurns[i]])
        if (t < -1 || t >= nextTurns.length) bad('turns');
    }
    for (let t = 0; t < nextTurns.length; t++)
      if (nextTurns[t] < -1 || nextTurns[t] >= nextTurns.length || nextTurns[t] === t)
        bad('turn chain');
    this.texts.restore(texts);
    for (const t of taskIds) this.taskIds.push(t);
    this.nextTurns = nextTurns;
    Object.assign(this, columns);
  }

  private grow(capacity: number): void {
    growColumns(this, EPISODE_COLUMNS, capacity);
  }
}
