import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { FidelityScores } from '../fidelity/scores';
import type { DiffKind } from '../fidelity/structuralDiff';
import type { CallTable } from './callTable';
import { COMPARABLE, EVENT_KINDS } from './callTable';
import { ID_PATTERN } from './ids';
import type { EventLocation, SkippedLine } from './reader';
import type { RunEndEvent, RunEvent } from './schema';
import type { EpisodeEntry, IndexState } from './traceIndex';
import { TraceIndex } from './traceIndex';
import type { TurnTable } from './turnTable';
import { TURN_KINDS } from './turnTable';
import { validateTraceEvent } from './validate';

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
export const SNAPSHOT_VERSION = 1;
/** Scans shorter than this are not saved: a trace of a few megabytes indexes in a blink. */
export const SNAPSHOT_MIN_BYTES = 16 * 1024 * 1024;
/** Bytes of the trace hashed into its fingerprint: its first and last 64 KiB, and 32 blocks of 4 KiB between. */
const EDGE_BYTES = 64 * 1024;
const SAMPLE_BLOCKS = 32;
const SAMPLE_BYTES = 4096;

type ColumnKind = 'u8' | 'i32' | 'u32' | 'f64' | 'ids';
type Column = Uint8Array | Int32Array | Uint32Array | Float64Array;
const ELEMENT_BYTES: Record<Exclude<ColumnKind, 'ids'>, number> = { u8: 1, i32: 4, u32: 4, f64: 8 };
const ARRAYS = { u8: Uint8Array, i32: Int32Array, u32: Uint32Array, f64: Float64Array } as const;

interface SectionHeader { name: string; kind: ColumnKind; bytes: number }

type EpisodeRecord = [id: string, index: number, taskId: string, mode: string, role: string | null, location: [number, number, number], turnRows: number[], end: EpisodeEntry['end'] | null];

interface SnapshotHeader {
  format: string;
  version: number;
  trace: { scanned: number; size: number; mtimeMs: number; fingerprint: string };
  state: { run: RunEvent | null; runEnd: RunEndEvent | null; skipped: SkippedLine[]; orphans: number; eventCount: number; nextLine: number };
  /** Every episode entry: first those of the episode list, then entries that replaced one by id. */
  episodes: EpisodeRecord[];
  listed: number;
  turns: { count: number; parseErrors: [number, string][]; answerPreviews: [number, string][]; callLists: [number, number[]][] };
  /** `explicitIds`: [row, id] of the calls whose id is not `<turn id>.c<position + 1>` (most have none). */
  calls: { count: number; explicitIds: [number, string][]; texts: string[]; scores: FidelityScores[]; counts: Record<DiffKind, number>[] };
  sections: SectionHeader[];
}

/** Where the saved index of a trace lives: `trace.index` beside `trace.jsonl` (any other name: `<name>.index`). */
export function snapshotFileOf(traceFile: string): string {
  return traceFile.endsWith('.jsonl') ? traceFile.slice(0, -'.jsonl'.length) + '.index' : traceFile + '.index';
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
    for (let i = 1; i <= SAMPLE_BLOCKS; i++) await take(Math.floor((i * scanned) / (SAMPLE_BLOCKS + 1)), SAMPLE_BYTES);
    await take(Math.max(0, scanned - EDGE_BYTES), EDGE_BYTES);
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

/** Saves the index beside its trace (atomically: a temporary file renamed over the old one); returns the file. */
export async function saveIndexSnapshot(index: TraceIndex): Promise<string> {
  const s = index.snapshotState();
  const { turns, calls } = s;
  const stat = await fs.stat(index.file);
  // Episode entries by identity: the list's, then those that replaced one in the by-id map.
  const entries = [...s.episodeList];
  const listed = entries.length;
  const inList = new Set(entries);
  for (const entry of s.episodesById.values()) if (!inList.has(entry)) entries.push(entry);
  const entryNumber = new Map<string, number>();
  entries.forEach((e, i) => entryNumber.set(e.episodeId, i)); // later entries win, as in the by-id map
  const episodes: EpisodeRecord[] = entries.map((e) => [e.episodeId, e.index, e.taskId, e.mode, e.role ?? null, [e.location.line, e.location.offset, e.location.length], e.turnIds.map((id) => turns.row(id) ?? -1), e.end ?? null]);
  const turnEpisodes = new Int32Array(turns.count);
  for (let r = 0; r < turns.count; r++) turnEpisodes[r] = entryNumber.get(turns.episodeIds[r]) ?? -1;
  // Scores and counts: the distinct values, numbered from 1 (0: none).
  const distinct = <T>(values: readonly (T | undefined)[]): { table: T[]; numbers: Uint32Array } => {
    const table: T[] = [];
    const byKey = new Map<string, number>();
    const objects = new Map<T, number>();
    const numbers = new Uint32Array(calls.count);
    for (let r = 0; r < calls.count; r++) {
      const v = values[r];
      if (v === undefined) continue;
      let n = objects.get(v);
      if (n === undefined) {
        const key = JSON.stringify(v);
        n = byKey.get(key);
        if (n === undefined) { table.push(v); n = table.length; byKey.set(key, n); }
        objects.set(v, n);
      }
      numbers[r] = n;
    }
    return { table, numbers };
  };
  // The work is cut in a few pieces, each followed by a turn of the event loop: the explorer saves
  // right after indexing, and a million-call index would otherwise hold the editor's thread for
  // about a second.
  const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));
  await breathe();
  const scores = distinct(calls.scores);
  const counts = distinct(calls.counts);
  await breathe();
  const columns: [string, ColumnKind, Column | string[]][] = [
    ['turn.ids', 'ids', turns.ids], ['turn.episodes', 'i32', turnEpisodes], ['turn.indexes', 'i32', turns.indexes], ['turn.kinds', 'u8', turns.kinds],
    ['turn.lines', 'u32', turns.lines], ['turn.offsets', 'f64', turns.offsets], ['turn.lengths', 'u32', turns.lengths],
    ['turn.callStarts', 'i32', turns.callStarts], ['turn.callCounts', 'i32', turns.callCounts],
    ['call.turnRows', 'i32', calls.turnRows], ['call.tools', 'u32', calls.tools],
    ['call.rehearsalErrors', 'u32', calls.rehearsalErrors], ['call.actualErrors', 'u32', calls.actualErrors], ['call.indexes', 'i32', calls.indexes],
    ['call.actualIsError', 'u8', calls.actualIsError], ['call.comparable', 'u8', calls.comparable],
    ...EVENT_KINDS.flatMap((_, k): [string, ColumnKind, Column][] => [[`call.lines.${k}`, 'u32', calls.lines[k]], [`call.offsets.${k}`, 'f64', calls.offsets[k]], [`call.lengths.${k}`, 'u32', calls.lengths[k]]]),
    ['call.scores', 'u32', scores.numbers], ['call.counts', 'u32', counts.numbers],
  ];
  const bodies = columns.map(([name, kind, column]): [SectionHeader, Buffer] => {
    if (kind === 'ids') {
      const bytes = Buffer.from((column as string[]).slice(0, turns.count).join('\n'), 'latin1');
      return [{ name, kind, bytes: bytes.length }, bytes];
    }
    const rows = name.startsWith('turn') ? turns.count : calls.count;
    const typed = column as Column;
    const bytes = Buffer.from(typed.buffer, typed.byteOffset, rows * ELEMENT_BYTES[kind]);
    return [{ name, kind, bytes: bytes.length }, bytes];
  });
  const header: SnapshotHeader = {
    format: FORMAT, version: SNAPSHOT_VERSION,
    trace: { scanned: s.scanned, size: stat.size, mtimeMs: stat.mtimeMs, fingerprint: await fingerprint(index.file, s.scanned) },
    state: { run: s.run ?? null, runEnd: s.runEnd ?? null, skipped: [...s.skipped], orphans: s.orphans, eventCount: s.eventCount, nextLine: s.nextLine },
    episodes, listed,
    turns: { count: turns.count, parseErrors: [...turns.parseErrors], answerPreviews: [...turns.answerPreviews], callLists: [...turns.callLists] },
    calls: { count: calls.count, explicitIds: [...calls.explicitIds], texts: calls.texts, scores: scores.table, counts: counts.table },
    sections: bodies.map(([h]) => h),
  };
  await breathe();
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const file = snapshotFileOf(index.file);
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await fs.open(temp, 'w');
  try {
    const length = Buffer.alloc(4);
    length.writeUInt32LE(headerBytes.length);
    let at = 0;
    const write = async (bytes: Buffer) => { await handle.write(bytes, 0, bytes.length, at); at += bytes.length; };
    const pad = async () => { if (at % 8) await write(Buffer.alloc(8 - (at % 8))); };
    await write(MAGIC);
    await write(length);
    await write(headerBytes);
    for (const [, body] of bodies) { await pad(); await write(body); }
    await handle.close();
    await fs.rename(temp, file);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await fs.rm(temp, { force: true });
    throw err;
  }
  return file;
}

/** Thrown inside the loader for a saved index that does not check out; the loader returns undefined for it. */
class Unusable extends Error {}

function check(ok: unknown, what: string): asserts ok {
  if (!ok) throw new Unusable(what);
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
const isLocation = (l: unknown): l is EventLocation =>
  typeof l === 'object' && l !== null && isCount((l as EventLocation).line) && isCount((l as EventLocation).offset) && isCount((l as EventLocation).length);

/**
 * Every location lies within the indexed bytes and lines (a call without an event of a kind has line
 * 0): a saved index cannot make the explorer read past what it describes, or allocate for a line
 * longer than the trace.
 */
function checkLocations(lines: Uint32Array, offsets: Float64Array, lengths: Uint32Array, scanned: number, nextLine: number, optional: boolean): void {
  for (let i = 0; i < lines.length; i++) {
    if (optional && lines[i] === 0) continue;
    check(lines[i] >= 1 && lines[i] <= nextLine && Number.isSafeInteger(offsets[i]) && offsets[i] >= 0 && offsets[i] + lengths[i] <= scanned, 'location out of range');
  }
}

/** Every value of a column lies in [min, max). */
function inRange(column: Int32Array | Uint32Array | Uint8Array, min: number, max: number, what: string): void {
  for (let i = 0; i < column.length; i++) check(column[i] >= min && column[i] < max, `${what} out of range`);
}

/**
 * The saved index beside a trace, restored (to be refreshed with what was appended since), or
 * undefined when there is none, it describes other bytes than the trace's, or it does not check out.
 * Never throws.
 */
export async function loadIndexSnapshot(traceFile: string): Promise<{ index: TraceIndex } | undefined> {
  try {
    return { index: await load(traceFile) };
  } catch {
    return undefined;
  }
}

async function load(traceFile: string): Promise<TraceIndex> {
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
    const sections = new Map<string, Column | string[]>();
    for (const s of h.sections) {
      check(typeof s === 'object' && s !== null && typeof s.name === 'string' && isCount(s.bytes) && (s.kind === 'ids' || s.kind in ELEMENT_BYTES), 'bad section');
      at += (8 - (at % 8)) % 8;
      check(at + s.bytes <= size, 'truncated section');
      if (s.kind === 'ids') {
        const bytes = Buffer.alloc(s.bytes);
        await handle.read(bytes, 0, s.bytes, at);
        const rows = h.turns.count;
        const ids = rows === 0 ? [] : bytes.toString('latin1').split('\n');
        check(ids.length === rows && ids.every((id) => ID_PATTERN.test(id)), `${s.name}: bad ids`);
        sections.set(s.name, ids);
      } else {
        const element = ELEMENT_BYTES[s.kind];
        check(s.bytes % element === 0, 'bad section length');
        const column = new ARRAYS[s.kind](s.bytes / element);
        if (s.bytes > 0) await handle.read(new Uint8Array(column.buffer), 0, s.bytes, at);
        sections.set(s.name, column);
      }
      at += s.bytes;
    }
    check(at === size, 'trailing bytes');
    return restore(traceFile, h, sections);
  } finally {
    await handle.close();
  }
}

/** The header's shapes and counts, before anything is built from it. */
function checkHeader(h: SnapshotHeader): void {
  check(typeof h.trace === 'object' && h.trace !== null && isCount(h.trace.scanned) && isCount(h.trace.size) && typeof h.trace.mtimeMs === 'number' && typeof h.trace.fingerprint === 'string', 'bad trace');
  const st = h.state;
  check(typeof st === 'object' && st !== null && isCount(st.orphans) && isCount(st.eventCount) && isCount(st.nextLine) && st.nextLine >= 1, 'bad state');
  for (const e of [st.run, st.runEnd]) check(e === null || validateTraceEvent(e).ok, 'bad run event');
  check(st.run === null || st.run.type === 'run', 'bad run event');
  check(st.runEnd === null || st.runEnd.type === 'run.end', 'bad run end event');
  check(Array.isArray(st.skipped) && st.skipped.every((s) => isCount(s?.line) && isCount(s.offset) && typeof s.reason === 'string'), 'bad skipped lines');
  check(typeof h.turns === 'object' && h.turns !== null && isCount(h.turns.count), 'bad turns');
  check(typeof h.calls === 'object' && h.calls !== null && isCount(h.calls.count), 'bad calls');
  const rowsOf = (list: unknown, isValue: (v: unknown) => boolean, rows = h.turns.count) =>
    Array.isArray(list) && list.every((p) => Array.isArray(p) && p.length === 2 && isCount(p[0]) && p[0] < rows && isValue(p[1]));
  check(rowsOf(h.calls.explicitIds, (v) => typeof v === 'string' && ID_PATTERN.test(v), h.calls.count), 'bad call ids');
  check(Array.isArray(h.calls.texts) && h.calls.texts.every((t) => typeof t === 'string'), 'bad texts');
  check(Array.isArray(h.calls.scores) && h.calls.scores.every((s) => typeof s === 'object' && s !== null && typeof s.exactMatch === 'boolean' && typeof s.fieldF1 === 'number'), 'bad scores');
  check(Array.isArray(h.calls.counts) && h.calls.counts.every((c) => typeof c === 'object' && c !== null && (['added', 'removed', 'changed', 'typeChanged'] as const).every((k) => isCount(c[k]))), 'bad counts');
  check(rowsOf(h.turns.parseErrors, (v) => typeof v === 'string') && rowsOf(h.turns.answerPreviews, (v) => typeof v === 'string'), 'bad turn texts');
  check(rowsOf(h.turns.callLists, (v) => Array.isArray(v) && v.every((r) => isCount(r) && r < h.calls.count)), 'bad call lists');
  check(Array.isArray(h.episodes) && isCount(h.listed) && h.listed <= h.episodes.length, 'bad episodes');
  for (const e of h.episodes) {
    check(Array.isArray(e) && e.length === 8 && ID_PATTERN.test(e[0]) && isCount(e[1]) && typeof e[2] === 'string' && typeof e[3] === 'string', 'bad episode');
    check((e[4] === null || e[4] === 'imagined' || e[4] === 'committed') && Array.isArray(e[5]) && e[5].length === 3 && e[5].every(isCount), 'bad episode');
    check(Array.isArray(e[6]) && e[6].every((r) => isCount(r) && r < h.turns.count), 'bad episode turns');
    const end = e[7];
    check(end === null || (typeof end === 'object' && typeof end.status === 'string' && isLocation(end.location) && (end.reward === null || typeof end.reward === 'number') && (end.success === null || typeof end.success === 'boolean')), 'bad episode end');
  }
}

function restore(traceFile: string, h: SnapshotHeader, sections: Map<string, Column | string[]>): TraceIndex {
  const turnCount = h.turns.count;
  const callCount = h.calls.count;
  const column = <K extends Exclude<ColumnKind, 'ids'>>(name: string, kind: K, rows: number): InstanceType<(typeof ARRAYS)[K]> => {
    const c = sections.get(name);
    check(c instanceof ARRAYS[kind] && c.length === rows, `${name} missing`);
    return c as InstanceType<(typeof ARRAYS)[K]>;
  };
  const ids = (name: string): string[] => {
    const c = sections.get(name);
    check(Array.isArray(c), `${name} missing`);
    return c;
  };
  const turnEpisodes = column('turn.episodes', 'i32', turnCount);
  inRange(turnEpisodes, 0, h.episodes.length, 'turn episode');
  const turnColumns = {
    indexes: column('turn.indexes', 'i32', turnCount), kinds: column('turn.kinds', 'u8', turnCount), lines: column('turn.lines', 'u32', turnCount),
    offsets: column('turn.offsets', 'f64', turnCount), lengths: column('turn.lengths', 'u32', turnCount),
    callStarts: column('turn.callStarts', 'i32', turnCount), callCounts: column('turn.callCounts', 'i32', turnCount),
  };
  inRange(turnColumns.kinds, 0, TURN_KINDS.length, 'turn kind');
  const { scanned } = h.trace;
  const { nextLine } = h.state;
  checkLocations(turnColumns.lines, turnColumns.offsets, turnColumns.lengths, scanned, nextLine, false);
  for (let r = 0; r < turnCount; r++) {
    const start = turnColumns.callStarts[r];
    const n = turnColumns.callCounts[r];
    check(n >= 0 && (n === 0 || (start >= 0 && start + n <= callCount)), 'turn calls out of range');
  }
  const calls = {
    turnRows: column('call.turnRows', 'i32', callCount), tools: column('call.tools', 'u32', callCount),
    rehearsalErrors: column('call.rehearsalErrors', 'u32', callCount), actualErrors: column('call.actualErrors', 'u32', callCount),
    indexes: column('call.indexes', 'i32', callCount), actualIsError: column('call.actualIsError', 'u8', callCount), comparable: column('call.comparable', 'u8', callCount),
    lines: EVENT_KINDS.map((_, k) => column(`call.lines.${k}`, 'u32', callCount)),
    offsets: EVENT_KINDS.map((_, k) => column(`call.offsets.${k}`, 'f64', callCount)),
    lengths: EVENT_KINDS.map((_, k) => column(`call.lengths.${k}`, 'u32', callCount)),
  };
  EVENT_KINDS.forEach((_, k) => checkLocations(calls.lines[k], calls.offsets[k], calls.lengths[k], scanned, nextLine, true));
  for (const e of h.episodes) {
    for (const l of [{ line: e[5][0], offset: e[5][1], length: e[5][2] }, ...(e[7] ? [e[7].location] : [])]) {
      check(l.line >= 1 && l.line <= nextLine && l.offset + l.length <= scanned, 'location out of range');
    }
  }
  inRange(calls.turnRows, 0, turnCount, 'call turn');
  inRange(calls.tools, 1, h.calls.texts.length, 'call tool');
  inRange(calls.rehearsalErrors, 0, h.calls.texts.length, 'call error');
  inRange(calls.actualErrors, 0, h.calls.texts.length, 'call error');
  inRange(calls.actualIsError, 0, 3, 'call outcome');
  inRange(calls.comparable, 0, COMPARABLE.length, 'call comparable');
  const scoreNumbers = column('call.scores', 'u32', callCount);
  const countNumbers = column('call.counts', 'u32', callCount);
  inRange(scoreNumbers, 0, h.calls.scores.length + 1, 'call scores');
  inRange(countNumbers, 0, h.calls.counts.length + 1, 'call counts');
  // (Duplicate ids are refused by the tables' restore.)
  const turnIds = ids('turn.ids');

  const entries: EpisodeEntry[] = h.episodes.map(([episodeId, index, taskId, mode, role, [line, offset, length], turnRows, end]) => {
    const entry: EpisodeEntry = { episodeId, index, taskId, mode: mode as EpisodeEntry['mode'], location: { line, offset, length }, turnIds: turnRows.map((r) => turnIds[r]) };
    if (role) entry.role = role as EpisodeEntry['role'];
    if (end) entry.end = end;
    return entry;
  });
  const byId = new Map<string, EpisodeEntry>();
  for (const e of entries) byId.set(e.episodeId, e);
  const state: Omit<IndexState, 'turns' | 'calls'> = {
    run: h.state.run ?? undefined, runEnd: h.state.runEnd ?? undefined, skipped: h.state.skipped, orphans: h.state.orphans,
    eventCount: h.state.eventCount, scanned: h.trace.scanned, nextLine: h.state.nextLine, episodeList: entries.slice(0, h.listed), episodesById: byId,
  };
  return TraceIndex.fromSnapshot(traceFile, state, (turns: TurnTable, table: CallTable) => {
    turns.restore(turnIds, Array.from(turnEpisodes, (n) => entries[n].episodeId), turnColumns);
    for (const [row, code] of h.turns.parseErrors) turns.parseErrors.set(row, code);
    for (const [row, text] of h.turns.answerPreviews) turns.answerPreviews.set(row, text);
    for (const [row, rows] of h.turns.callLists) turns.callLists.set(row, rows);
    const scores = Array.from(scoreNumbers, (n) => (n === 0 ? undefined : h.calls.scores[n - 1]));
    const counts = Array.from(countNumbers, (n) => (n === 0 ? undefined : h.calls.counts[n - 1]));
    table.restore(callCount, h.calls.explicitIds, { texts: h.calls.texts, scores, counts, ...calls });
  });
}
