import { grown } from './columns';

const FIRST_CAPACITY = 1024;
/** Ids match ids.ts's ID_PATTERN: ASCII, at most 128 characters. */
const MAX_ID_LENGTH = 128;

/**
 * Ids numbered in the order they were added, without a string or a map entry per id: the ids' bytes
 * in one buffer and an open-addressing hash table of their numbers. Half a million turn ids as
 * strings in a Map hold about 35 MB; here about 12. An id's string is made when asked for.
 */
export class IdTable {
  /** The columns, exposed read-only to the index snapshot. */
  bytes: Buffer = Buffer.alloc(0);
  used = 0;
  starts: Float64Array = new Float64Array(0);
  lengths: Uint8Array = new Uint8Array(0);
  /** Hash slots: an id's number + 1, 0 when empty; a power of two, at most half full. */
  slots: Int32Array = new Int32Array(0);
  private size = 0;

  /** Number of ids. */
  get count(): number {
    return this.size;
  }

  /** The number of an id, or undefined. */
  get(id: string): number | undefined {
    if (this.size === 0 || id.length === 0 || id.length > MAX_ID_LENGTH) return undefined;
    const mask = this.slots.length - 1;
    for (let slot = hash(id) & mask; ; slot = (slot + 1) & mask) {
      const n = this.slots[slot];
      if (n === 0) return undefined;
      if (this.equals(n - 1, id)) return n - 1;
    }
  }

  /** Adds an id that is not in the table (the caller looked it up first); returns its number. */
  add(id: string): number {
    if (id.length === 0 || id.length > MAX_ID_LENGTH)
      throw new RangeError(`id of ${id.length} characters`);
    const n = this.size++;
    if (n === this.starts.length) {
      const capacity = Math.max(FIRST_CAPACITY, this.starts.length * 2);
      this.starts = grown(this.starts, capacity);
      this.lengths = grown(this.lengths, capacity);
    }
    if (this.used + id.length > this.bytes.length) {
      const next = Buffer.alloc(
        Math.max(FIRST_CAPACITY * 16, this.bytes.length * 2, this.used + id.length),
      );
      this.bytes.copy(next, 0, 0, this.used);
      this.bytes = next;
    }
    this.bytes.write(id, this.used, 'latin1');
    this.starts[n] = this.used;
    this.lengths[n] = id.length;
    this.used += id.length;
    if (2 * this.size > this.slots.length)
      this.rehash(Math.max(FIRST_CAPACITY * 2, this.slots.length * 2));
    else this.place(n);
    return n;
  }

  /** The id numbered `n`. */
  idOf(n: number): string {
    const start = this.starts[n];
    return this.bytes.toString('latin1', start, start + this.lengths[n]);
  }

  /** Forgets every id. */
  clear(): void {
    this.bytes = Buffer.alloc(0);
    this.used = 0;
    this.starts = new Float64Array(0);
    this.lengths = new Uint8Array(0);
    this.slots = new Int32Array(0);
    this.size = 0;
  }

  /**
   * Replaces the content with ids read back from an index snapshot: their bytes (ASCII id
   * characters only), where each starts and its length; the hash table is rebuilt. Throws on ids
   * that do not check out (out of the bytes, empty, repeated).
   */
  restore(bytes: Buffer, starts: Float64Array, lengths: Uint8Array): void {
    if (starts.length !== lengths.length) throw new Error('bad id table');
    for (let i = 0; i < bytes.length; i++) if (!ID_BYTE[bytes[i]]) throw new Error('bad id bytes');
    for (let n = 0; n < starts.length; n++) {
      if (!(
        lengths[n] >= 1 &&
        lengths[n] <= MAX_ID_LENGTH &&
        Number.isSafeInteger(starts[n]) &&
        starts[n] >= 0 &&
        starts[n] + lengths[n] <= bytes.length
      ))
        throw new Error('bad id');
    }
    this.bytes = bytes;
    this.used = bytes.length;
    this.starts = starts;
    this.lengths = lengths;
    this.size = starts.length;
    let slots = FIRST_CAPACITY * 2;
    while (2 * this.size > slots) slots *= 2;
    this.rehash(slots, true);
  }

  private equals(n: number, id: string): boolean {
    if (this.lengths[n] !== id.length) return false;
    const start = this.starts[n];
    for (let i = 0; i < id.length; i++)
      if (this.bytes[start + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  private sameBytes(a: number, b: number): boolean {
    if (this.lengths[a] !== this.lengths[b]) return false;
    return (
      this.bytes.compare(
        this.bytes,
        this.starts[b],
        this.starts[b] + this.lengths[b],
        this.starts[a],
        this.starts[a] + this.lengths[a],
      ) === 0
    );
  }

  /** Puts id `n` in its hash slot; with `refuseRepeats`, throws when an equal id is there already. */
  private place(n: number, refuseRepeats = false): void {
    const mask = this.slots.length - 1;
    const start = this.starts[n];
    let slot = hashBytes(this.bytes, start, start + this.lengths[n]) & mask;
    for (; this.slots[slot] !== 0; slot = (slot + 1) & mask) {
      if (refuseRepeats && this.sameBytes(this.slots[slot] - 1, n)) throw new Error('repeated id');
    }
    this.slots[slot] = n + 1;
  }

  private rehash(size: number, refuseRepeats = false): void {
    this.slots = new Int32Array(size);
    for (let n = 0; n < this.size; n++) this.place(n, refuseRepeats);
  }
}

/** Bytes allowed in an id (ID_PATTERN's characters). */
const ID_BYTE = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-')
  ID_BYTE[c.charCodeAt(0)] = 1;

/** FNV-1a of an ASCII string, equal to {@link hashBytes} of its bytes. */
function hash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function hashBytes(bytes: Buffer, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}
