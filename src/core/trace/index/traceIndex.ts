import { compareIds } from '../format/ids';
import { promises as fs } from 'node:fs';
import { StudioError } from '../../base/errors';
import { CallTable, type CallOutcome } from './callTable';
import { readLineBatches } from '../format/lineReader';
import { SharedValues } from './sharedValues';
import type { IndexState } from './indexSnapshot';
import {
  readIndexSnapshot,
  saveIndexSnapshot,
  SNAPSHOT_MIN_BYTES,
  snapshotAllowed,
} from './indexSnapshot';
import type { CallEntry, EpisodeEntry, TurnEntry } from './entries';
import { EpisodeTable } from './episodeTable';
import { TurnTable } from './turnTable';
import type { EventLocation, SkippedLine } from '../format/reader';
import { decodeLine, keepSkipped, readEventAt, TORN_LAST_LINE } from '../format/reader';
import type {
  EpisodeEndEvent,
  RunEndEvent,
  RunEvent,
  TraceEvent,
  TurnEvent,
} from '../format/schema';

const PREVIEW_CHARS = 80;

/** Options of {@link TraceIndex.build} and {@link TraceIndex.refresh}. */
export interface IndexingOptions {
  /** Called every few megabytes with the bytes scanned so far and the file's size, for progress bars. */
  onProgress?: (scannedBytes: number, totalBytes: number) => void;
}

/** Options of {@link TraceIndex.open}. */
export interface OpenIndexOptions extends IndexingOptions {
  /** Save the index beside the trace after a long scan (default true). */
  save?: boolean;
  /** How long a scan must have been, in bytes, for the index to be saved (default SNAPSHOT_MIN_BYTES, 16 MiB). */
  saveAfterBytes?: number;
  /** Told when saving the index failed (the index itself is fine). */
  onSaveError?: (err: Error) => void;
}

/** How often, in bytes, indexing reports progress. */
const PROGRESS_STEP_BYTES = 8 * 1024 * 1024;

/**
 * An index of one trace file: episodes, turns and calls with the byte locations of their events,
 * so that a single call is read without parsing the whole file. It grows incrementally: `refresh()`
 * reads only the bytes appended since the last scan, which keeps a run being written live.
 */
export class TraceIndex {
  run: RunEvent | undefined;
  runEnd: RunEndEvent | undefined;
  /** The first MAX_SKIPPED_KEPT (reader.ts) skipped lines, in file order. */
  readonly skipped: SkippedLine[] = [];
  /** Every skipped line, counted (the torn last line, still pending, is not one of them). */
  skippedCount = 0;
  /** Events that name an episode, turn or call the trace never introduced. */
  orphans = 0;
  eventCount = 0;
  /** Bytes of the trace whose index was read back from its saved index rather than scanned (0: none). */
  restoredBytes = 0;
  private readonly episodeTable = new EpisodeTable();
  private readonly turnTable = new TurnTable();
  private readonly callTable = new CallTable(this.turnTable, this.episodeTable);
  private shared = new SharedValues();
  private scanned = 0;
  private nextLine = 1;
  private pending = 0;
  /** The incomplete last line is blank so far (whitespace, a BOM): not torn, as the reader skips blank lines. */
  private pendingBlank = false;

  private constructor(readonly file: string) {}

  /** Builds the index of a trace file from nothing, reading every line. */
  static async build(file: string, options: IndexingOptions = {}): Promise<TraceIndex> {
    const index = new TraceIndex(file);
    await index.refresh(options);
    return index;
  }

  /**
   * The index of a trace file, as the explorer opens it: read back from the index saved beside the
   * trace when that still describes the trace's first bytes, then brought up to date with what was
   * appended since; else built from nothing, and saved for the next time when the trace is large
   * and lives in a `.rehearsal` folder (see indexSnapshot.ts). A saved index that cannot be used is
   * ignored, never an error.
   */
  static async open(file: string, options: OpenIndexOptions = {}): Promise<TraceIndex> {
    const restored = await loadIndexSnapshot(file);
    const index = restored?.index ?? new TraceIndex(file);
    const from = index.scanned;
    await index.refresh(options);
    if (
      options.save !== false &&
      index.scanned - from >= (options.saveAfterBytes ?? SNAPSHOT_MIN_BYTES) &&
      index.scanned > from &&
      snapshotAllowed(file)
    ) {
      try {
        await saveIndexSnapshot(index);
      } catch (err) {
        options.onSaveError?.(err as Error);
      }
    }
    return index;
  }

  /** @internal What a snapshot of the index saves (snapshot code only; never mutate). */
  snapshotState(): IndexState {
    return {
      run: this.run,
      runEnd: this.runEnd,
      skipped: this.skipped,
      skippedCount: this.skippedCount,
      orphans: this.orphans,
      eventCount: this.eventCount,
      scanned: this.scanned,
      nextLine: this.nextLine,
      episodes: this.episodeTable,
      turns: this.turnTable,
      calls: this.callTable,
    };
  }

  /**
   * @internal An index of `file` holding a snapshot's state, to be refreshed; `fill` restores the
   * tables (the snapshot loader checks their values first, the tables' restore the ids).
   */
  static fromSnapshot(
    file: string,
    state: Omit<IndexState, 'episodes' | 'turns' | 'calls'>,
    fill: (episodes: EpisodeTable, turns: TurnTable, calls: CallTable) => void,
  ): TraceIndex {
    const index = new TraceIndex(file);
    index.run = state.run;
    index.runEnd = state.runEnd;
    // Loops, not push(...list): a list of a million overflows the stack.
    for (const s of state.skipped) index.skipped.push(s);
    index.skippedCount = state.skippedCount;
    index.orphans = state.orphans;
    index.eventCount = state.eventCount;
    index.scanned = state.scanned;
    index.nextLine = state.nextLine;
    index.restoredBytes = state.scanned;
    fill(index.episodeTable, index.turnTable, index.callTable);
    return index;
  }

  /** Bytes scanned so far; everything before this offset is indexed. */
  get scannedBytes(): number {
    return this.scanned;
  }

  /** Bytes of an incomplete last line, waiting for the rest of its write. */
  get pendingBytes(): number {
    return this.pending;
  }

  /**
   * The incomplete last line as a skipped line, if there is one. It stays unconsumed, so that it is
   * indexed if its write completes; but a crash leaves it torn for good, and then it must show as
   * skipped (as `readTrace` reports it), not as a run still being written.
   */
  get tornLastLine(): SkippedLine | undefined {
    return this.pending > 0 && !this.pendingBlank
      ? { line: this.nextLine, offset: this.scanned, reason: TORN_LAST_LINE }
      : undefined;
  }

  /**
   * All episodes, in the run's planned order (their ids' order, {@link compareIds}), which is the
   * order the trace introduced them unless episodes were played at once (entries built at each
   * call: keep the array while needed).
   */
  get episodes(): readonly EpisodeEntry[] {
    const order = this.planned().episodes;
    const episodes = new Array<EpisodeEntry>(this.episodeTable.count);
    for (let n = 0; n < episodes.length; n++) episodes[n] = this.episodeEntry(order ? order[n] : n);
    return episodes;
  }

  /**
   * Rows of episodes and calls in planned order, or undefined where that is the file's order (a
   * run played one episode at a time): episodes by id, and the calls of each episode in the order
   * of its turns. Recomputed when the index grew.
   */
  private planned(): { episodes?: Int32Array; calls?: Int32Array } {
    const key = `${this.episodeTable.count}/${this.callTable.count}`;
    if (this.plannedOrder?.key === key) return this.plannedOrder;
    const ne = this.episodeTable.count;
    const ids = this.episodeTable.ids;
    // Only the rows added since the last look are compared: a growing trace costs its new rows.
    if (this.inOrderUpTo >= 0) {
      let r = Math.max(1, this.inOrderUpTo);
      while (r < ne && compareIds(ids.idOf(r - 1), ids.idOf(r)) <= 0) r++;
      this.inOrderUpTo = r < ne ? -1 : ne;
    }
    const sorted = this.inOrderUpTo >= 0;
    let episodes: Int32Array | undefined;
    let calls: Int32Array | undefined;
    if (!sorted) {
      const idOf = ids.idOf.bind(ids);
      episodes = Int32Array.from({ length: ne }, (_, r) => r).sort((a, b) =>
        compareIds(idOf(a), idOf(b)),
      );
      const rank = new Int32Array(ne);
      episodes.forEach((row, n) => (rank[row] = n));
      const callEpisode = (c: number) => this.turnTable.episodeRows[this.callTable.turnRows[c]];
      calls = Int32Array.from({ length: this.callTable.count }, (_, r) => r).sort(
        (a, b) => rank[callEpisode(a)] - rank[callEpisode(b)] || a - b,
      );
    }
    this.plannedOrder = { key, episodes, calls };
    return this.plannedOrder;
  }
  private plannedOrder: { key: string; episodes?: Int32Array; calls?: Int32Array } | undefined;
  /** Episode rows known to be in id order so far; -1 once one was found out of order. */
  private inOrderUpTo = 0;

  /** The row of the `n`th call in planned order. */
  private callRowAt(n: number): number {
    const order = this.planned().calls;
    return order ? order[n] : n;
  }

  /** Number of episodes. */
  get episodeCount(): number {
    return this.episodeTable.count;
  }

  /** What the index knows of an episode; a new object at each call, built from the index's columns. */
  episode(id: string): EpisodeEntry | undefined {
    const row = this.episodeTable.row(id);
    return row === undefined ? undefined : this.episodeEntry(row);
  }

  private episodeEntry(row: number): EpisodeEntry {
    return this.episodeTable.entry(
      row,
      this.episodeTable.turnRows(row).map((t) => this.turnTable.idOf(t)),
    );
  }

  /** What the index knows of a turn; a new object at each call, built from the index's columns. */
  turn(id: string): TurnEntry | undefined {
    const row = this.turnTable.row(id);
    return row === undefined
      ? undefined
      : this.turnTable.entry(
          row,
          this.episodeTable.ids.idOf(this.turnTable.episodeRows[row]),
          this.turnTable.callRows(row).map((r) => this.callTable.idOf(r)),
        );
  }

  /** What the index knows of a call; a new object at each call, built from the index's columns. */
  call(id: string): CallEntry | undefined {
    const row = this.callTable.row(id);
    return row === undefined ? undefined : this.callTable.entry(row);
  }

  /** All calls, in the order of their episodes ({@link episodes}), then of their turns. */
  calls(): CallEntry[] {
    const calls = new Array<CallEntry>(this.callTable.count);
    for (let n = 0; n < calls.length; n++) calls[n] = this.callTable.entry(this.callRowAt(n));
    return calls;
  }

  /**
   * What the index knows of a call but the byte locations of its events: cheaper than
   * {@link call}, to rank or filter every call of a large trace.
   */
  callSummary(id: string): CallEntry | undefined {
    const row = this.callTable.row(id);
    return row === undefined ? undefined : this.callTable.entry(row, false);
  }

  /** The summaries ({@link callSummary}) of all calls, in the order of {@link calls}. */
  callSummaries(): CallEntry[] {
    const calls = new Array<CallEntry>(this.callTable.count);
    for (let n = 0; n < calls.length; n++)
      calls[n] = this.callTable.entry(this.callRowAt(n), false);
    return calls;
  }

  /** The ids of all calls, in the order of {@link calls}, without building their entries (a new array at each call). */
  callIds(): string[] {
    const order = this.planned().calls;
    if (!order) return this.callTable.ids();
    return Array.from(order, (row) => this.callTable.idOf(row));
  }

  /** Number of calls. */
  get callCount(): number {
    return this.callTable.count;
  }

  /** The id of the `n`th call of {@link calls}. */
  callIdAt(n: number): string {
    return this.callTable.idOf(this.callRowAt(n));
  }

  /**
   * Visits every call's outcome (errors and scores), in the order of {@link calls}, with one object
   * reused from call to call: to count or rank a million calls without building their entries.
   */
  forEachCallOutcome(visit: (outcome: Readonly<CallOutcome>, n: number) => void): void {
    const outcome: CallOutcome = {};
    const order = this.planned().calls;
    for (let n = 0; n < this.callTable.count; n++) {
      this.callTable.outcomeInto(order ? order[n] : n, outcome);
      visit(outcome, n);
    }
  }

  /** The policy's act throughput: completion tokens and generation time summed over the turns that recorded both. */
  actThroughput(): { tokens: number; ms: number } {
    let tokens = 0,
      ms = 0;
    const t = this.turnTable;
    for (let r = 0; r < t.count; r++) {
      if (
        Number.isFinite(t.completionTokens[r]) &&
        Number.isFinite(t.latencies[r]) &&
        t.latencies[r] > 0
      ) {
        tokens += t.completionTokens[r];
        ms += t.latencies[r];
      }
    }
    return { tokens, ms };
  }

  /** The episodes numbered `start` to `end` (excluded) of {@link episodes}: a page without building the others. */
  episodesIn(start: number, end: number): EpisodeEntry[] {
    const order = this.planned().episodes;
    const page: EpisodeEntry[] = [];
    for (let n = Math.max(0, start); n < Math.min(end, this.episodeTable.count); n++)
      page.push(this.episodeEntry(order ? order[n] : n));
    return page;
  }

  turnsOf(episode: EpisodeEntry): TurnEntry[] {
    return episode.turnIds.map((id) => this.turn(id)).filter((t): t is TurnEntry => !!t);
  }

  callsOf(turn: TurnEntry): CallEntry[] {
    return turn.callIds.map((id) => this.call(id)).filter((c): c is CallEntry => !!c);
  }

  /**
   * Indexes what was appended since the last scan. Returns true when something changed. A file
   * that shrank was replaced: the index starts over.
   */
  async refresh(options: IndexingOptions = {}): Promise<boolean> {
    let size: number;
    try {
      size = (await fs.stat(this.file)).size;
    } catch (err) {
      throw new StudioError(
        'TRACE_UNREADABLE',
        `Cannot read trace ${this.file}: ${(err as Error).message}.`,
      );
    }
    if (size < this.scanned) this.reset();
    if (size === this.scanned + this.pending && this.eventCount + this.skippedCount > 0)
      return false;
    const before = this.eventCount + this.skippedCount;
    this.pending = 0;
    this.pendingBlank = false;
    let nextReport = this.scanned + PROGRESS_STEP_BYTES;
    lines: for await (const batch of readLineBatches(this.file, {
      start: this.scanned,
      firstLine: this.nextLine,
      end: size,
    })) {
      for (const raw of batch) {
        if (options.onProgress && raw.offset >= nextReport) {
          options.onProgress(raw.offset, size);
          nextReport = raw.offset + PROGRESS_STEP_BYTES;
        }
        const decoded = decodeLine(raw);
        if (!raw.terminated && decoded.ok !== true) {
          this.pending = raw.length; // still being written, or torn: not consumed
          this.pendingBlank = decoded.ok === 'blank';
          break lines;
        }
        this.scanned = raw.offset + raw.length + (raw.terminated ? 1 : 0);
        // A complete event whose newline has not arrived yet is consumed, but its line stays open: the
        // newline that ends it must not count as a line of its own, or later line numbers drift.
        this.nextLine = raw.terminated ? raw.line + 1 : raw.line;
        if (decoded.ok === 'blank') continue;
        if (!decoded.ok) {
          this.skippedCount++;
          keepSkipped(this.skipped, { line: raw.line, offset: raw.offset, reason: decoded.reason });
          continue;
        }
        this.eventCount++;
        this.add(decoded.event, { line: raw.line, offset: raw.offset, length: raw.length });
      }
    }
    return this.eventCount + this.skippedCount !== before;
  }

  /** Reads one event by its location. */
  readEvent(location: EventLocation): Promise<TraceEvent> {
    return readEventAt(this.file, location);
  }

  private reset(): void {
    this.plannedOrder = undefined;
    this.inOrderUpTo = 0;
    this.run = undefined;
    this.runEnd = undefined;
    this.skipped.length = 0;
    this.skippedCount = 0;
    this.orphans = 0;
    this.eventCount = 0;
    this.restoredBytes = 0;
    this.episodeTable.clear();
    this.turnTable.clear();
    this.callTable.clear();
    this.shared = new SharedValues();
    this.scanned = 0;
    this.nextLine = 1;
    this.pending = 0;
    this.pendingBlank = false;
  }

  private add(e: TraceEvent, location: EventLocation): void {
    switch (e.type) {
      case 'run':
        this.run ??= e;
        return;
      case 'run.end':
        this.runEnd = e;
        return;
      case 'episode': {
        this.episodeTable.put(
          e.episodeId,
          e.index,
          e.taskId,
          e.mode,
          e.role,
          location,
          Date.parse(e.ts),
        );
        return;
      }
      case 'turn':
        this.addTurn(e, location);
        return;
      case 'call.rehearsal': {
        const row = this.callFor(e.callId, e.turnId, e.episodeId, e.tool);
        if (row === undefined) return;
        this.callTable.setLocation(row, 'rehearsal', location);
        this.callTable.setRehearsalError(row, e.result.ok ? undefined : e.result.code);
        return;
      }
      case 'call.actual': {
        const row = this.callFor(e.callId, e.turnId, e.episodeId, e.tool);
        if (row === undefined) return;
        this.callTable.setLocation(row, 'actual', location);
        this.callTable.setActualOutcome(
          row,
          e.error ? e.error.code : undefined,
          e.response?.isError === true,
        );
        return;
      }
      case 'fidelity': {
        const row = this.callTable.row(e.callId);
        if (row === undefined) {
          this.orphans++;
          return;
        }
        this.callTable.setLocation(row, 'fidelity', location);
        this.callTable.setFidelity(row, e.comparable, e.scores, e.counts);
        return;
      }
      case 'episode.end':
        this.addEpisodeEnd(e, location);
        return;
    }
  }

  /** A turn: its row (a turn listed again replaces its call list), its parse outcome, its calls. */
  private addTurn(e: TurnEvent, location: EventLocation): void {
    const episode = this.episodeTable.row(e.episodeId);
    if (episode === undefined) {
      this.orphans++;
      return;
    }
    const knownRow = this.turnTable.row(e.turnId);
    const known = knownRow !== undefined;
    // A turn listed again: its earlier calls keep their ids explicitly, as its call list is replaced.
    if (known) for (const r of this.turnTable.callRows(knownRow)) this.callTable.keepId(r);
    // The episode's own id string: half a million turns add up.
    const row = this.turnTable.put(
      e.turnId,
      episode,
      e.index,
      location,
      e.parse.kind,
      e.tokens?.completion,
      e.latencyMs,
    );
    if (e.parse.kind === 'error')
      this.turnTable.parseErrors.set(row, this.shared.text(e.parse.code));
    if (e.parse.kind === 'final')
      this.turnTable.answerPreviews.set(
        row,
        this.shared.text(e.parse.answer.slice(0, PREVIEW_CHARS)),
      );
    if (e.parse.kind === 'calls') {
      e.parse.calls.forEach((c, i) =>
        this.turnTable.addCall(row, this.callTable.put(c.callId, row, c.name, i)),
      );
    }
    if (!known) this.episodeTable.addTurn(episode, row);
  }

  /** An episode's end: its status, reward and success on its row. */
  private addEpisodeEnd(e: EpisodeEndEvent, location: EventLocation): void {
    const episode = this.episodeTable.row(e.episodeId);
    if (episode === undefined) {
      this.orphans++;
      return;
    }
    this.episodeTable.setEnd(
      episode,
      {
        status: e.status,
        reward: e.reward,
        success: e.success,
        location,
        ...(e.error ? { errorCode: e.error.code } : {}),
      },
      Date.parse(e.ts),
    );
  }

  private callFor(
    callId: string,
    turnId: string,
    episodeId: string,
    tool: string,
  ): number | undefined {
    const known = this.callTable.row(callId);
    if (known !== undefined) return known;
    const turn = this.turnTable.row(turnId);
    if (
      turn === undefined ||
      this.turnTable.episodeRows[turn] !== this.episodeTable.row(episodeId)
    ) {
      this.orphans++;
      return undefined;
    }
    // A call the turn did not list (e.g. a replayed call): attach it to its turn.
    const row = this.callTable.put(callId, turn, tool, this.turnTable.callCount(turn));
    this.turnTable.addCall(turn, row);
    return row;
  }
}

/**
 * The saved index beside a trace, restored (to be refreshed with what was appended since), or
 * undefined when there is none, it describes other bytes than the trace's, or it does not check out.
 * Never throws.
 */
export function loadIndexSnapshot(traceFile: string): Promise<{ index: TraceIndex } | undefined> {
  return readIndexSnapshot(traceFile, (state, fill) =>
    TraceIndex.fromSnapshot(traceFile, state, fill),
  );
}
