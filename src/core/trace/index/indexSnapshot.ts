import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { openForWrite, removeInside, renameInside, writeRootOf } from '../../base/writePath';
import type { FidelityScores } from '../../fidelity/scores';
import type { DiffKind } from '../../fidelity/structuralDiff';
import type { CallTable } from './callTable';
import { CALL_COLUMNS, COMPARABLE, EVENT_KINDS } from './callTable';
import type { Column } from './columns';
import { ID_PATTERN } from '../format/ids';
import type { SkippedLine } from '../format/reader';
import { MAX_SKIPPED_KEPT } from '../format/reader';
import type { RunEndEvent, RunEvent } from '../format/schema';
import type { EpisodeColumns, EpisodeTable } from './episodeTable';
import { EPISODE_COLUMNS } from './episodeTable';
import type { IdTable } from './idTable';
import type { TurnTable } from './turnTable';
import { TURN_COLUMNS, TURN_KINDS } from './turnTable';
import { validateTraceEvent } from '../format/validate';

/** What an index snapshot saves and restores. */
export interface IndexState {
  run: RunEvent | undefined;
  runEnd: RunEndEvent | undefined;
  /** The first MAX_SKIPPED_KEPT skipped lines; `skippedCount` counts them all. */
  skipped: readonly SkippedLine[];
  skippedCount: number;
  orphans: number;
  eventCount: number;
  /** Bytes indexed: the snapshot describes the trace's first `scanned` bytes. */
  scanned: number;
  nextLine: number;
  episodes: EpisodeTable;
  turns: TurnTable;
  calls: CallTable;
}

/** What {@link saveIndexSnapshot} saves: a trace index (the snapshot code reads its tables as they are). */
export interface SnapshotSource {
  readonly file: string;
  snapshotState(): IndexState;
}

/** Restores the tables of an index built from a snapshot's state (the loader checks their values first). */
export type SnapshotFill = (episodes: EpisodeTable, turns: TurnTable, calls: CallTable) => void;

/** Builds an index from a snapshot's state and the function that fills its tables. */
export type SnapshotBuild<T> = (
  state: Omit<IndexState, 'episodes' | 'turns' | 'calls'>,
  fill: SnapshotFill,
) => T;

/**
 * A saved trace index (`trace.index` beside `trace.jsonl`): what {@link TraceIndex} knows of the
 * trace's first `scanned` bytes, so that reopening a large trace reads a few columns instead of
 * parsing every line again. It is a cache: derived from the trace alone, safe to delete, ignored
 * (and rebuilt) whenever it does not match the trace it sits beside or cannot be read. Layout:
 * an 8-byte magic, the header's length (u32, little-endian), the header (JSON: counts, small values,
 * episodes, the trace's fingerprint, the list of sections), then the sections (typed columns and
 * `\n`-joined ids), each starting on an 8-byte boundary.
 */
const MAGIC = Buffer.from('RSTIDX1\n', 'latin1');
const FORMAT = 'rehearsal-studio trace index';
export const SNAPSHOT_VERSION = 4;
/** Scans shorter than this are not saved: a trace of a few megabytes indexes in a blink. */
export const SNAPSHOT_MIN_BYTES = 16 * 1024 * 1024;
/** Bytes of the trace hashed into its fingerprint: its first and last 64 KiB, and 32 blocks of 4 KiB between. */
const EDGE_BYTES = 64 * 1024;
const SAMPLE_BLOCKS = 32;
const SAMPLE_BYTES = 4096;

type ColumnKind = 'u8' | 'i32' | 'u32' | 'f64';
const ELEMENT_BYTES: Record<ColumnKind, number> = { u8: 1, i32: 4, u32: 4, f64: 8 };
/** A section to write: its name, kind, the column and how many of its values are rows. */
type SectionSource = [name: string, kind: ColumnKind, column: Column, rows: number];

const ARRAYS = { u8: Uint8Array, i32: Int32Array, u32: Uint32Array, f64: Float64Array } as const;

interface SectionHeader {
  name: string;
  kind: ColumnKind;
  bytes: number;
}

interface SnapshotHeader {
  format: string;
  version: number;
  trace: { scanned: number; size: number; mtimeMs: number; fingerprint: string };
  state: {
    run: RunEvent | null;
    runEnd: RunEndEvent | null;
    skipped: SkippedLine[];
    skippedCount: number;
    orphans: number;
    eventCount: number;
    nextLine: number;
  };
  /** Episodes (their columns in `episode.*` sections): `texts` numbers modes, roles, statuses and error codes (0: none); `taskIds`, one per episode. */
  episodes: { count: number; texts: string[]; taskIds: string[] };
  turns: {
    count: number;
    parseErrors: [number, string][];
    answerPreviews: [number, string][];
    callLists: [number, number[]][];
  };
  /** `explicitIds`: [row, id] of the calls whose id is not `<turn id>.c<position + 1>` (most have none). */
  calls: {
    count: number;
    explicitIds: [number, string][];
    texts: string[];
    scoreSets: FidelityScores[];
    countSets: Record<DiffKind, number>[];
  };
  sections: SectionHeader[];
}

function kindOf(c: Column): ColumnKind {
  return c instanceof Float64Array
    ? 'f64'
    : c instanceof Int32Array
      ? 'i32'
      : c instanceof Uint32Array
        ? 'u32'
        : 'u8';
}

/** Where the saved index of a trace lives: `trace.index` beside `trace.jsonl` (any other name: `<name>.index`). */
export function snapshotFileOf(traceFile: string): string {
  return traceFile.endsWith('.jsonl')
    ? traceFile.slice(0, -'.jsonl'.length) + '.index'
    : traceFile + '.index';
}

/** Saved indexes are written only inside a `.rehearsal` folder: the studio does not litter a user's other folders. */
export function snapshotAllowed(traceFile: string): boolean {
  return path.resolve(traceFile).split(path.sep).includes('.rehearsal');
}

/** A hash of the trace's first `scanned` bytes, sampled: its edges and evenly spaced blocks. */
async function fingerprint(traceFile: string, scanned: number): Promise<string> {
  const handle = await fs.open(traceFile, 'r');
  try {
    const hash = createHash('sha1').update(String(scanned));
    const take = async (offset: number, length: number) => {
      const bytes = Buffer.alloc(Math.max(0, Math.min(length, scanned - offset)));
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, offset);
      hash.update(bytes.subarray(0, bytesRead));
    };
    await take(0, EDGE_BYTES);
    for (let i = 1; i <= SAMPLE_BLOCKS; i++)
      await take(Math.floor((i * scanned) / (SAMPLE_BLOCKS + 1)), SAMPLE_BYTES);
    await take(Math.max(0, scanned - EDGE_BYTES), EDGE_BYTES);
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

/** Saves the index beside its trace (atomically: a temporary file renamed over the old one); returns the file. */
export async function saveIndexSnapshot(index: SnapshotSource): Promise<string> {
  const s = index.snapshotState();
  const stat = await fs.stat(index.file);
  const bodies = snapshotColumns(s).map(([name, kind, column, rows]): [SectionHeader, Buffer] => {
    const bytes = Buffer.from(column.buffer, column.byteOffset, rows * ELEMENT_BYTES[kind]);
    return [{ name, kind, bytes: bytes.length }, bytes];
  });
  // A turn of the event loop before the one long step left (the header's JSON): the explorer saves
  // right after indexing, on the editor's thread.
  await new Promise<void>((resolve) => setImmediate(resolve));
  const trace = {
    scanned: s.scanned,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    fingerprint: await fingerprint(index.file, s.scanned),
  };
  const header = snapshotHeader(
    s,
    trace,
    bodies.map(([h]) => h),
  );
  const file = snapshotFileOf(index.file);
  await writeSnapshotFile(file, Buffer.from(JSON.stringify(header), 'utf8'), bodies);
  return file;
}

/** The index's tables as the sections to write: every table is columns already, written as they are in memory. */
function snapshotColumns(s: IndexState): SectionSource[] {
  const { episodes, turns, calls } = s;
  const idColumns = (prefix: string, ids: IdTable): SectionSource[] => [
    [`${prefix}.idBytes`, 'u8', ids.bytes, ids.used],
    [`${prefix}.idStarts`, 'f64', ids.starts, ids.count],
    [`${prefix}.idLengths`, 'u8', ids.lengths, ids.count],
  ];
  const e = episodes.count;
  const t = turns.count;
  const c = calls.count;
  return [
    ...idColumns('episode', episodes.ids),
    ...EPISODE_COLUMNS.map((k): SectionSource => [
      `episode.${k}`,
      kindOf(episodes[k]),
      episodes[k],
      e,
    ]),
    ['episode.nextTurns', 'i32', episodes.nextTurns, t],
    ...idColumns('turn', turns.ids),
    ...TURN_COLUMNS.map((k): SectionSource => [`turn.${k}`, kindOf(turns[k]), turns[k], t]),
    ...CALL_COLUMNS.map((k): SectionSource => [`call.${k}`, kindOf(calls[k]), calls[k], c]),
    ...EVENT_KINDS.flatMap((_, k): SectionSource[] => [
      [`call.lines.${k}`, 'u32', calls.lines[k], c],
      [`call.offsets.${k}`, 'f64', calls.offsets[k], c],
      [`call.lengths.${k}`, 'u32', calls.lengths[k], c],
    ]),
  ];
}

/** The snapshot's JSON header: the trace it indexes, the index's state and texts, and the sections that follow. */
function snapshotHeader(
  s: IndexState,
  trace: SnapshotHeader['trace'],
  sections: SectionHeader[],
): SnapshotHeader {
  const { episodes, turns, calls } = s;
  return {
    format: FORMAT,
    version: SNAPSHOT_VERSION,
    trace,
    state: {
      run: s.run ?? null,
      runEnd: s.runEnd ?? null,
      skipped: [...s.skipped],
      skippedCount: s.skippedCount,
      orphans: s.orphans,
      eventCount: s.eventCount,
      nextLine: s.nextLine,
    },
    episodes: { count: episodes.count, texts: episodes.texts.list, taskIds: episodes.taskIds },
    turns: {
      count: turns.count,
      parseErrors: [...turns.parseErrors],
      answerPreviews: [...turns.answerPreviews],
      callLists: [...turns.callLists],
    },
    calls: {
      count: calls.count,
      explicitIds: [...calls.explicitIds],
      texts: calls.texts.list,
      scoreSets: calls.scoreSets,
      countSets: calls.countSets,
    },
    sections,
  };
}

/**
 * Writes the snapshot file atomically: magic, header length, header, then each section on an 8-byte
 * boundary, into a temporary file renamed over `file`.
 */
async function writeSnapshotFile(
  file: string,
  headerBytes: Buffer,
  bodies: [SectionHeader, Buffer][],
): Promise<void> {
  // Unique per save: the runner (at a run's end) and the explorer may save the same trace's index at once, in one process.
  const temp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  // Inside the `.rehearsal` the trace lies in: a run folder that links out of it gets no index.
  const root = writeRootOf(path.dirname(file));
  const handle = await openForWrite(root, temp, 'w');
  try {
    const length = Buffer.alloc(4);
    length.writeUInt32LE(headerBytes.length);
    let at = 0;
    const write = async (bytes: Buffer) => {
      await handle.write(bytes, 0, bytes.length, at);
      at += bytes.length;
    };
    const pad = async () => {
      if (at % 8) await write(Buffer.alloc(8 - (at % 8)));
    };
    await write(MAGIC);
    await write(length);
    await write(headerBytes);
    for (const [, body] of bodies) {
      await pad();
      await write(body);
    }
    await handle.close();
    await renameInside(root, temp, file);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await removeInside(root, temp, { force: true });
    throw err;
  }
}

/** Thrown inside the loader for a saved index that does not check out; the loader returns undefined for it. */
class Unusable extends Error {}

function check(ok: unknown, what: string): asserts ok {
  if (!ok) throw new Unusable(what);
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
/**
 * Every location lies within the indexed bytes and lines (a call without an event of a kind has line
 * 0): a saved index cannot make the explorer read past what it describes, or allocate for a line
 * longer than the trace.
 */
function checkLocations(
  lines: Uint32Array,
  offsets: Float64Array,
  lengths: Uint32Array,
  scanned: number,
  nextLine: number,
  optional: boolean,
): void {
  for (let i = 0; i < lines.length; i++) {
    if (optional && lines[i] === 0) continue;
    check(
      lines[i] >= 1 &&
        lines[i] <= nextLine &&
        Number.isSafeInteger(offsets[i]) &&
        offsets[i] >= 0 &&
        offsets[i] + lengths[i] <= scanned,
      'location out of range',
    );
  }
}

/**
 * The locations of all tables together describe one file: a line has one offset and length wherever
 * it is named, and a later line starts after the end of an earlier one. A damaged offset (zeroed,
 * shifted) breaks that order, so the saved index is not used and the trace is read instead: the
 * index is a cache and must never be why a command fails.
 */
function checkLocationOrder(
  nextLine: number,
  columns: readonly (readonly [Uint32Array, Float64Array, Uint32Array])[],
): void {
  const offsets = new Float64Array(nextLine + 1).fill(-1);
  const lengths = new Float64Array(nextLine + 1);
  for (const [lines, offs, lens] of columns) {
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (line === 0) continue;
      if (offsets[line] === -1) {
        offsets[line] = offs[i];
        lengths[line] = lens[i];
      } else
        check(offsets[line] === offs[i] && lengths[line] === lens[i], 'one line at two locations');
    }
  }
  let end = -1;
  let lastLine = 0;
  for (let line = 1; line <= nextLine; line++) {
    if (offsets[line] === -1) continue;
    // Each line between two located ones holds at least its newline.
    check(offsets[line] > end && offsets[line] - end >= line - lastLine, 'locations out of order');
    end = offsets[line] + lengths[line];
    lastLine = line;
  }
}

/** Every value of a column lies in [min, max). */
function inRange(
  column: Int32Array | Uint32Array | Uint8Array,
  min: number,
  max: number,
  what: string,
): void {
  for (let i = 0; i < column.length; i++)
    check(column[i] >= min && column[i] < max, `${what} out of range`);
}

/**
 * The saved index beside a trace, restored (to be refreshed with what was appended since), or
 * undefined when there is none, it describes other bytes than the trace's, or it does not check out.
 * Never throws.
 */
export async function readIndexSnapshot<T>(
  traceFile: string,
  build: SnapshotBuild<T>,
): Promise<{ index: T } | undefined> {
  try {
    return { index: await load(traceFile, build) };
  } catch {
    return undefined;
  }
}

async function load<T>(traceFile: string, build: SnapshotBuild<T>): Promise<T> {
  const file = snapshotFileOf(traceFile);
  const handle = await fs.open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const head = Buffer.alloc(12);
    await handle.read(head, 0, 12, 0);
    check(head.subarray(0, 8).equals(MAGIC), 'not a saved trace index');
    const headerLength = head.readUInt32LE(8);
    check(12 + headerLength <= size, 'truncated header');
    const headerBytes = Buffer.alloc(headerLength);
    await handle.read(headerBytes, 0, headerLength, 12);
    const h = JSON.parse(headerBytes.toString('utf8')) as SnapshotHeader;
    check(h.format === FORMAT && h.version === SNAPSHOT_VERSION, 'other version');
    checkHeader(h);
    // The trace: at least as long as what was indexed, not rewritten in place, same fingerprint.
    const stat = await fs.stat(traceFile);
    check(stat.size >= h.trace.scanned, 'trace shorter than indexed');
    check(!(stat.size === h.trace.size && stat.mtimeMs !== h.trace.mtimeMs), 'trace rewritten');
    check((await fingerprint(traceFile, h.trace.scanned)) === h.trace.fingerprint, 'trace differs');
    // Sections, read straight into their columns.
    let at = 12 + headerLength;
    const sections = new Map<string, Column>();
    for (const s of h.sections) {
      check(
        typeof s === 'object' &&
          s !== null &&
          typeof s.name === 'string' &&
          isCount(s.bytes) &&
          Object.hasOwn(ELEMENT_BYTES, s.kind),
        'bad section',
      );
      at += (8 - (at % 8)) % 8;
      check(at + s.bytes <= size, 'truncated section');
      const element = ELEMENT_BYTES[s.kind];
      check(s.bytes % element === 0, 'bad section length');
      const column = s.name.endsWith('.idBytes')
        ? Buffer.alloc(s.bytes)
        : new ARRAYS[s.kind](s.bytes / element);
      if (s.bytes > 0)
        await handle.read(
          new Uint8Array(column.buffer, column.byteOffset, s.bytes),
          0,
          s.bytes,
          at,
        );
      sections.set(s.name, column);
      at += s.bytes;
    }
    check(at === size, 'trailing bytes');
    return restore(h, sections, build);
  } finally {
    await handle.close();
  }
}

/** The header's shapes and counts, before anything is built from it. */
function checkHeader(h: SnapshotHeader): void {
  checkTraceAndState(h);
  checkTurnsAndCalls(h);
  checkEpisodes(h);
}

/** The header's trace (what the snapshot indexes) and the index's state: run events, skipped lines. */
function checkTraceAndState(h: SnapshotHeader): void {
  check(
    typeof h.trace === 'object' &&
      h.trace !== null &&
      isCount(h.trace.scanned) &&
      isCount(h.trace.size) &&
      typeof h.trace.mtimeMs === 'number' &&
      typeof h.trace.fingerprint === 'string',
    'bad trace',
  );
  const st = h.state;
  check(
    typeof st === 'object' &&
      st !== null &&
      isCount(st.orphans) &&
      isCount(st.eventCount) &&
      isCount(st.nextLine) &&
      st.nextLine >= 1,
    'bad state',
  );
  for (const e of [st.run, st.runEnd])
    check(e === null || validateTraceEvent(e).ok, 'bad run event');
  check(st.run === null || st.run.type === 'run', 'bad run event');
  check(st.runEnd === null || st.runEnd.type === 'run.end', 'bad run end event');
  check(
    Array.isArray(st.skipped) &&
      st.skipped.length <= MAX_SKIPPED_KEPT &&
      st.skipped.every(
        (s) => isCount(s?.line) && isCount(s.offset) && typeof s.reason === 'string',
      ),
    'bad skipped lines',
  );
  check(
    isCount(st.skippedCount) &&
      st.skippedCount >= st.skipped.length &&
      (st.skipped.length === MAX_SKIPPED_KEPT || st.skippedCount === st.skipped.length),
    'bad skipped count',
  );
}

/** The header's turns and calls: counts, rows that exist, ids, texts, scores that are shares. */
function checkTurnsAndCalls(h: SnapshotHeader): void {
  check(typeof h.turns === 'object' && h.turns !== null && isCount(h.turns.count), 'bad turns');
  check(typeof h.calls === 'object' && h.calls !== null && isCount(h.calls.count), 'bad calls');
  const rowsOf = (list: unknown, isValue: (v: unknown) => boolean, rows = h.turns.count) =>
    Array.isArray(list) &&
    list.every(
      (p) => Array.isArray(p) && p.length === 2 && isCount(p[0]) && p[0] < rows && isValue(p[1]),
    );
  check(
    rowsOf(h.calls.explicitIds, (v) => typeof v === 'string' && ID_PATTERN.test(v), h.calls.count),
    'bad call ids',
  );
  check(
    Array.isArray(h.calls.texts) && h.calls.texts.every((t) => typeof t === 'string'),
    'bad texts',
  );
  // Scores are shares: a saved index that says otherwise (`fieldF1: -5`) is not believed.
  const share = (v: unknown, nullable: boolean) =>
    (nullable && v === null) || (typeof v === 'number' && v >= 0 && v <= 1);
  check(
    Array.isArray(h.calls.scoreSets) &&
      h.calls.scoreSets.every(
        (s) =>
          typeof s === 'object' &&
          s !== null &&
          typeof s.exactMatch === 'boolean' &&
          share(s.fieldF1, false) &&
          share(s.keyJaccard, true) &&
          share(s.typeAgreement, true) &&
          typeof s.errorAgreement === 'boolean',
      ),
    'bad scores',
  );
  check(
    Array.isArray(h.calls.countSets) &&
      h.calls.countSets.every(
        (c) =>
          typeof c === 'object' &&
          c !== null &&
          (['added', 'removed', 'changed', 'typeChanged'] as const).every((k) => isCount(c[k])),
      ),
    'bad counts',
  );
  check(
    rowsOf(h.turns.parseErrors, (v) => typeof v === 'string') &&
      rowsOf(h.turns.answerPreviews, (v) => typeof v === 'string'),
    'bad turn texts',
  );
  check(
    rowsOf(
      h.turns.callLists,
      (v) => Array.isArray(v) && v.every((r) => isCount(r) && r < h.calls.count),
    ),
    'bad call lists',
  );
}

/** The header's episodes: a count, texts, and a task id for each. */
function checkEpisodes(h: SnapshotHeader): void {
  const ep = h.episodes;
  check(typeof ep === 'object' && ep !== null && isCount(ep.count), 'bad episodes');
  check(
    Array.isArray(ep.texts) && ep.texts.every((t) => typeof t === 'string'),
    'bad episode texts',
  );
  check(
    Array.isArray(ep.taskIds) &&
      ep.taskIds.length === ep.count &&
      ep.taskIds.every((t) => typeof t === 'string'),
    'bad task ids',
  );
}

/** Builds the index from a checked header and its sections; every column is checked before it is used. */
function restore<T>(h: SnapshotHeader, sections: Map<string, Column>, build: SnapshotBuild<T>): T {
  const episodeCount = h.episodes.count;
  const turnCount = h.turns.count;
  const callCount = h.calls.count;
  const { scanned } = h.trace;
  const { nextLine } = h.state;
  const { episodeColumns, nextTurns } = restoredEpisodeColumns(h, sections);
  const turnColumns = restoredTurnColumns(h, sections);
  const calls = restoredCallColumns(h, sections);
  checkLocationOrder(nextLine, [
    [episodeColumns.lines, episodeColumns.offsets, episodeColumns.lengths],
    [episodeColumns.endLines, episodeColumns.endOffsets, episodeColumns.endLengths],
    [turnColumns.lines, turnColumns.offsets, turnColumns.lengths],
    ...EVENT_KINDS.map((_, k) => [calls.lines[k], calls.offsets[k], calls.lengths[k]] as const),
  ]);

  const state: Omit<IndexState, 'episodes' | 'turns' | 'calls'> = {
    run: h.state.run ?? undefined,
    runEnd: h.state.runEnd ?? undefined,
    skipped: h.state.skipped,
    skippedCount: h.state.skippedCount,
    orphans: h.state.orphans,
    eventCount: h.state.eventCount,
    scanned,
    nextLine,
  };
  // The tables' restore checks the ids (characters, bounds, no repeats) and the episodes' values.
  return build(state, (episodes: EpisodeTable, turns: TurnTable, table: CallTable) => {
    episodes.restore(
      idsOf(sections, 'episode', episodeCount),
      h.episodes.taskIds,
      h.episodes.texts,
      nextTurns,
      episodeColumns,
    );
    turns.restore(idsOf(sections, 'turn', turnCount), turnColumns);
    for (const [row, code] of h.turns.parseErrors) turns.parseErrors.set(row, code);
    for (const [row, text] of h.turns.answerPreviews) turns.answerPreviews.set(row, text);
    for (const [row, rows] of h.turns.callLists) turns.callLists.set(row, rows);
    table.restore(callCount, h.calls.explicitIds, {
      texts: h.calls.texts,
      scoreSets: h.calls.scoreSets,
      countSets: h.calls.countSets,
      ...calls,
    });
  });
}

/** A section read as a column of `kind` with `rows` values; one missing or of another shape is unusable. */
function column<K extends ColumnKind>(
  sections: Map<string, Column>,
  name: string,
  kind: K,
  rows: number,
): InstanceType<(typeof ARRAYS)[K]> {
  const c = sections.get(name);
  check(c instanceof ARRAYS[kind] && c.length === rows, `${name} missing`);
  return c as InstanceType<(typeof ARRAYS)[K]>;
}

/** The id table sections of episodes or turns (`prefix`). */
function idsOf(sections: Map<string, Column>, prefix: string, rows: number) {
  const bytes = sections.get(`${prefix}.idBytes`);
  check(Buffer.isBuffer(bytes), `${prefix} ids missing`);
  return {
    bytes,
    starts: column(sections, `${prefix}.idStarts`, 'f64', rows),
    lengths: column(sections, `${prefix}.idLengths`, 'u8', rows),
  };
}

/** The episodes' columns and their next-turn links, their event locations checked. */
function restoredEpisodeColumns(h: SnapshotHeader, sections: Map<string, Column>) {
  const episodeCount = h.episodes.count;
  const turnCount = h.turns.count;
  const { scanned } = h.trace;
  const { nextLine } = h.state;
  const episodeColumns = Object.fromEntries(
    EPISODE_COLUMNS.map((k) => [k, sections.get(`episode.${k}`)]),
  ) as unknown as EpisodeColumns;
  check(
    EPISODE_COLUMNS.every((k) => sections.get(`episode.${k}`)?.length === episodeCount),
    'episode columns missing',
  );
  const nextTurns = column(sections, 'episode.nextTurns', 'i32', turnCount);
  checkLocations(
    episodeColumns.lines,
    episodeColumns.offsets,
    episodeColumns.lengths,
    scanned,
    nextLine,
    false,
  );
  checkLocations(
    episodeColumns.endLines,
    episodeColumns.endOffsets,
    episodeColumns.endLengths,
    scanned,
    nextLine,
    true,
  );
  return { episodeColumns, nextTurns };
}

/** The turns' columns, their episodes, kinds, locations and call ranges checked. */
function restoredTurnColumns(h: SnapshotHeader, sections: Map<string, Column>) {
  const episodeCount = h.episodes.count;
  const turnCount = h.turns.count;
  const callCount = h.calls.count;
  const { scanned } = h.trace;
  const { nextLine } = h.state;
  const turnColumns = {
    episodeRows: column(sections, 'turn.episodeRows', 'i32', turnCount),
    indexes: column(sections, 'turn.indexes', 'i32', turnCount),
    kinds: column(sections, 'turn.kinds', 'u8', turnCount),
    lines: column(sections, 'turn.lines', 'u32', turnCount),
    offsets: column(sections, 'turn.offsets', 'f64', turnCount),
    lengths: column(sections, 'turn.lengths', 'u32', turnCount),
    callStarts: column(sections, 'turn.callStarts', 'i32', turnCount),
    callCounts: column(sections, 'turn.callCounts', 'i32', turnCount),
    completionTokens: column(sections, 'turn.completionTokens', 'f64', turnCount),
    latencies: column(sections, 'turn.latencies', 'f64', turnCount),
  };
  inRange(turnColumns.episodeRows, 0, episodeCount, 'turn episode');
  inRange(turnColumns.kinds, 0, TURN_KINDS.length, 'turn kind');
  checkLocations(
    turnColumns.lines,
    turnColumns.offsets,
    turnColumns.lengths,
    scanned,
    nextLine,
    false,
  );
  for (let r = 0; r < turnCount; r++) {
    const start = turnColumns.callStarts[r];
    const n = turnColumns.callCounts[r];
    check(n >= 0 && (n === 0 || (start >= 0 && start + n <= callCount)), 'turn calls out of range');
  }
  return turnColumns;
}

/** The calls' columns, their locations and references into the header's tables checked. */
function restoredCallColumns(h: SnapshotHeader, sections: Map<string, Column>) {
  const turnCount = h.turns.count;
  const callCount = h.calls.count;
  const { scanned } = h.trace;
  const { nextLine } = h.state;
  const calls = {
    turnRows: column(sections, 'call.turnRows', 'i32', callCount),
    tools: column(sections, 'call.tools', 'u32', callCount),
    rehearsalErrors: column(sections, 'call.rehearsalErrors', 'u32', callCount),
    actualErrors: column(sections, 'call.actualErrors', 'u32', callCount),
    indexes: column(sections, 'call.indexes', 'i32', callCount),
    actualIsError: column(sections, 'call.actualIsError', 'u8', callCount),
    comparable: column(sections, 'call.comparable', 'u8', callCount),
    scores: column(sections, 'call.scores', 'u32', callCount),
    counts: column(sections, 'call.counts', 'u32', callCount),
    lines: EVENT_KINDS.map((_, k) => column(sections, `call.lines.${k}`, 'u32', callCount)),
    offsets: EVENT_KINDS.map((_, k) => column(sections, `call.offsets.${k}`, 'f64', callCount)),
    lengths: EVENT_KINDS.map((_, k) => column(sections, `call.lengths.${k}`, 'u32', callCount)),
  };
  EVENT_KINDS.forEach((_, k) =>
    checkLocations(calls.lines[k], calls.offsets[k], calls.lengths[k], scanned, nextLine, true),
  );
  inRange(calls.turnRows, 0, turnCount, 'call turn');
  inRange(calls.tools, 0, h.calls.texts.length, 'call tool');
  inRange(calls.rehearsalErrors, 0, h.calls.texts.length, 'call error');
  inRange(calls.actualErrors, 0, h.calls.texts.length, 'call error');
  inRange(calls.actualIsError, 0, 3, 'call outcome');
  inRange(calls.comparable, 0, COMPARABLE.length, 'call comparable');
  inRange(calls.scores, 0, h.calls.scoreSets.length + 1, 'call scores');
  inRange(calls.counts, 0, h.calls.countSets.length + 1, 'call counts');
  return calls;
}
