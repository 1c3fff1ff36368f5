import { promises as fs } from 'node:fs';
import { StudioError } from '../base/errors';
import type { FidelityScores } from '../fidelity/scores';
import type { DiffKind } from '../fidelity/structuralDiff';
import { CallTable } from './callTable';
import { readLineBatches } from './lineReader';
import { SharedValues } from './sharedValues';
import type { EventLocation, SkippedLine } from './reader';
import { decodeLine, readEventAt, TORN_LAST_LINE } from './reader';
import type { EpisodeStatus, RunEndEvent, RunEvent, RunMode, TraceEvent } from './schema';

/** What the index knows of one call without reading its events. */
export interface CallEntry {
  callId: string;
  turnId: string;
  episodeId: string;
  tool: string;
  /** Position among its turn's calls. */
  index: number;
  rehearsal?: EventLocation;
  actual?: EventLocation;
  fidelity?: EventLocation;
  /** Code of the rehearsal's parse error, if it failed to parse. */
  rehearsalError?: string;
  /** Code of the actual call's error (timeout, crash, no recorded answer), if any. */
  actualError?: string;
  /** The tool answered with an error result. */
  actualIsError?: boolean;
  comparable?: 'json' | 'text' | 'none';
  scores?: FidelityScores;
  counts?: Record<DiffKind, number>;
}

/** What the index knows of one turn. */
export interface TurnEntry {
  turnId: string;
  episodeId: string;
  index: number;
  location: EventLocation;
  kind: 'calls' | 'final' | 'error';
  /** The act parse error code when `kind` is `error`. */
  parseError?: string;
  /** First characters of the final answer. */
  answerPreview?: string;
  callIds: string[];
}

/** What the index knows of one episode. */
export interface EpisodeEntry {
  episodeId: string;
  index: number;
  taskId: string;
  mode: RunMode;
  role?: 'imagined' | 'committed';
  location: EventLocation;
  turnIds: string[];
  end?: { status: EpisodeStatus; reward: number | null; success: boolean | null; location: EventLocation; errorCode?: string };
}

const PREVIEW_CHARS = 80;

/** One string per turn kind, instead of the parsed line's copy per turn. */
const TURN_KINDS: Readonly<Record<TurnEntry['kind'], TurnEntry['kind']>> = { calls: 'calls', final: 'final', error: 'error' };

/** Options of {@link TraceIndex.build} and {@link TraceIndex.refresh}. */
export interface IndexingOptions {
  /** Called every few megabytes with the bytes scanned so far and the file's size, for progress bars. */
  onProgress?: (scannedBytes: number, totalBytes: number) => void;
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
  readonly skipped: SkippedLine[] = [];
  /** Events that name an episode, turn or call the trace never introduced. */
  orphans = 0;
  eventCount = 0;
  private readonly episodeList: EpisodeEntry[] = [];
  private readonly episodesById = new Map<string, EpisodeEntry>();
  private readonly turnsById = new Map<string, TurnEntry>();
  private readonly callTable = new CallTable();
  private shared = new SharedValues();
  private scanned = 0;
  private nextLine = 1;
  private pending = 0;
  /** The incomplete last line is blank so far (whitespace, a BOM): not torn, as the reader skips blank lines. */
  private pendingBlank = false;

  private constructor(readonly file: string) {}

  /** Builds the index of a trace file. */
  static async build(file: string, options: IndexingOptions = {}): Promise<TraceIndex> {
    const index = new TraceIndex(file);
    await index.refresh(options);
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
    return this.pending > 0 && !this.pendingBlank ? { line: this.nextLine, offset: this.scanned, reason: TORN_LAST_LINE } : undefined;
  }

  get episodes(): readonly EpisodeEntry[] {
    return this.episodeList;
  }

  episode(id: string): EpisodeEntry | undefined {
    return this.episodesById.get(id);
  }

  turn(id: string): TurnEntry | undefined {
    return this.turnsById.get(id);
  }

  /** What the index knows of a call; a new object at each call, built from the index's columns. */
  call(id: string): CallEntry | undefined {
    const row = this.callTable.row(id);
    return row === undefined ? undefined : this.callTable.entry(row);
  }

  /** All calls, in the order their turns introduced them. */
  calls(): CallEntry[] {
    return this.callIds().map((id) => this.call(id)!);
  }

  /**
   * What the index knows of a call but the byte locations of its events: cheaper than
   * {@link call}, to rank or filter every call of a large trace.
   */
  callSummary(id: string): CallEntry | undefined {
    const row = this.callTable.row(id);
    return row === undefined ? undefined : this.callTable.entry(row, false);
  }

  /** The ids of all calls, in the order of {@link calls}, without building their entries. */
  callIds(): readonly string[] {
    return this.callTable.ids();
  }

  turnsOf(episode: EpisodeEntry): TurnEntry[] {
    return episode.turnIds.map((id) => this.turnsById.get(id)).filter((t): t is TurnEntry => !!t);
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
      throw new StudioError('TRACE_UNREADABLE', `Cannot read trace ${this.file}: ${(err as Error).message}.`);
    }
    if (size < this.scanned) this.reset();
    if (size === this.scanned + this.pending && this.eventCount + this.skipped.length > 0) return false;
    const before = this.eventCount + this.skipped.length;
    this.pending = 0;
    this.pendingBlank = false;
    let nextReport = this.scanned + PROGRESS_STEP_BYTES;
    lines: for await (const batch of readLineBatches(this.file, { start: this.scanned, firstLine: this.nextLine, end: size })) {
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
        if (!decoded.ok) { this.skipped.push({ line: raw.line, offset: raw.offset, reason: decoded.reason }); continue; }
        this.eventCount++;
        this.add(decoded.event, { line: raw.line, offset: raw.offset, length: raw.length });
      }
    }
    return this.eventCount + this.skipped.length !== before;
  }

  /** Reads one event by its location. */
  readEvent(location: EventLocation): Promise<TraceEvent> {
    return readEventAt(this.file, location);
  }

  private reset(): void {
    this.run = undefined;
    this.runEnd = undefined;
    this.skipped.length = 0;
    this.orphans = 0;
    this.eventCount = 0;
    this.episodeList.length = 0;
    this.episodesById.clear();
    this.turnsById.clear();
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
        const entry: EpisodeEntry = { episodeId: e.episodeId, index: e.index, taskId: e.taskId, mode: e.mode, location, turnIds: [] };
        if (e.role) entry.role = e.role;
        if (!this.episodesById.has(e.episodeId)) this.episodeList.push(entry);
        this.episodesById.set(e.episodeId, entry);
        return;
      }
      case 'turn': {
        const episode = this.episodesById.get(e.episodeId);
        if (!episode) { this.orphans++; return; }
        // The episode's own id string and a call list of exact size: half a million turns add up.
        const callIds = e.parse.kind === 'calls' ? e.parse.calls.map((c) => c.callId) : [];
        const turn: TurnEntry = { turnId: e.turnId, episodeId: episode.episodeId, index: e.index, location, kind: TURN_KINDS[e.parse.kind], callIds };
        if (e.parse.kind === 'error') turn.parseError = e.parse.code;
        if (e.parse.kind === 'final') turn.answerPreview = e.parse.answer.slice(0, PREVIEW_CHARS);
        if (e.parse.kind === 'calls') {
          e.parse.calls.forEach((c, i) => this.callTable.put(c.callId, turn.turnId, turn.episodeId, this.shared.text(c.name), i));
        }
        if (!this.turnsById.has(e.turnId)) episode.turnIds.push(e.turnId);
        this.turnsById.set(e.turnId, turn);
        return;
      }
      case 'call.rehearsal': {
        const row = this.callFor(e.callId, e.turnId, e.episodeId, e.tool);
        if (row === undefined) return;
        this.callTable.setLocation(row, 'rehearsal', location);
        this.callTable.setRehearsalError(row, e.result.ok ? undefined : this.shared.text(e.result.code));
        return;
      }
      case 'call.actual': {
        const row = this.callFor(e.callId, e.turnId, e.episodeId, e.tool);
        if (row === undefined) return;
        this.callTable.setLocation(row, 'actual', location);
        this.callTable.setActualOutcome(row, e.error ? this.shared.text(e.error.code) : undefined, e.response?.isError === true);
        return;
      }
      case 'fidelity': {
        const row = this.callTable.row(e.callId);
        if (row === undefined) { this.orphans++; return; }
        this.callTable.setLocation(row, 'fidelity', location);
        this.callTable.setFidelity(row, e.comparable, e.scores && this.shared.scores(e.scores), e.counts && this.shared.counts(e.counts));
        return;
      }
      case 'episode.end': {
        const episode = this.episodesById.get(e.episodeId);
        if (!episode) { this.orphans++; return; }
        episode.end = { status: e.status, reward: e.reward, success: e.success, location };
        if (e.error) episode.end.errorCode = e.error.code;
        return;
      }
    }
  }

  private callFor(callId: string, turnId: string, episodeId: string, tool: string): number | undefined {
    const known = this.callTable.row(callId);
    if (known !== undefined) return known;
    const turn = this.turnsById.get(turnId);
    if (!turn || turn.episodeId !== episodeId) { this.orphans++; return undefined; }
    // A call the turn did not list (e.g. a replayed call): attach it to its turn.
    const row = this.callTable.put(callId, turn.turnId, turn.episodeId, this.shared.text(tool), turn.callIds.length);
    turn.callIds.push(callId);
    return row;
  }
}
