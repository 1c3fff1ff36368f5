import type { PastTensors } from './kvCache';
import { commonPrefixLength } from './kvCache';

/** The KV cache an episode's conversation left behind: the token ids it covers and their keys and values. */
export interface KvSession {
  ids: number[];
  past: PastTensors;
}

/** GPU-resident tensors hold device memory until disposed; CPU ones are left to the garbage collector. */
export function releaseDeviceTensors(past: PastTensors): void {
  for (const t of Object.values(past)) if (t.location === 'gpu-buffer') t.dispose();
}

/** The most idle sessions kept, whatever their size (each holds a cache and its ids). */
export const MAX_IDLE_SESSIONS = 256;
/** The most caches of ended sessions kept for their prefixes ({@link KvSessionCache.retire}). */
export const MAX_DONORS = 8;

/**
 * Idle sessions' caches, least recently used first. A request takes its session's cache out while it
 * runs (so nothing evicts what it reads, and two requests never write one cache) and puts the new
 * one back when it ends. The scheduler evicts from the least recently used end to keep the KV memory
 * within its bound.
 */
export class KvSessionCache {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  private readonly entries = new Map<string, KvSession>();
  /** Caches of ended sessions, oldest first: only their prefixes are read, and they go first. */
  private readonly donors: KvSession[] = [];
  private cachedTokens = 0;

  /** Tokens held by idle sessions. */
  get tokens(): number {
    return this.cachedTokens;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Removes and returns a session's cache (the caller owns it now). */
  take(key: string): KvSession | undefined {
    const session = this.entries.get(key);
    if (session) {
      this.entries.delete(key);
      this.cachedTokens -= session.ids.length;
    }
    return session;
  }

  /** Keeps a session's cache as the most recently used; drops the oldest past MAX_IDLE_SESSIONS. */
  put(key: string, session: KvSession): void {
    this.end(key);
    this.entries.set(key, session);
    this.cachedTokens += session.ids.length;
    while (this.entries.size > MAX_IDLE_SESSIONS) this.evictLeastRecent();
  }

  /** Whether an idle session keeps these tensors. */
  holds(past: PastTensors): boolean {
    for (const session of this.entries.values()) if (session.past === past) return true;
    return false;
  }

  /**
   * The idle session whose cache holds the longest prefix of `ids` (read, not taken: it stays the
   * session's); undefined when none shares a token.
   */
  longestPrefix(ids: readonly number[]): { session: KvSession; length: number } | undefined {
    let best: { session: KvSession; length: number } | undefined;
    for (const session of [...this.donors, ...this.entries.values()]) {
      const length = commonPrefixLength(session.ids, ids);
      if (length > (best?.length ?? 0)) best = { session, length };
    }
    return best;
  }

  /**
   * Ends a session but keeps its cache, for the prefix that later conversations share with it (the
   * system prompt and tools of the next episode): read by {@link longestPrefix}, never resumed, the
   * first to go when room is needed; at most {@link MAX_DONORS}.
   */
  retire(key: string): void {
    const session = this.take(key);
    if (!session) return;
    this.donors.push(session);
    this.cachedTokens += session.ids.length;
    while (this.donors.length > MAX_DONORS) this.dropDonor();
  }

  private dropDonor(): void {
    const donor = this.donors.shift();
    if (!donor) return;
    this.cachedTokens -= donor.ids.length;
    releaseDeviceTensors(donor.past);
  }

  /** Forgets a session's cache. */
  end(key: string): void {
    const session = this.take(key);
    if (session) releaseDeviceTensors(session.past);
  }

  /** Tokens a session's cache holds (0 when none). */
  tokensOf(key: string | undefined): number {
    return (key !== undefined && this.entries.get(key)?.ids.length) || 0;
  }

  /** Drops the least recently used cache other than `except`'s; false when none is left. */
  evictLeastRecent(except?: string): boolean {
    if (this.donors.length) {
      this.dropDonor();
      return true;
    }
    for (const key of this.entries.keys()) {
      if (key === except) continue;
      this.end(key);
      return true;
    }
    return false;
  }

  clear(): void {
    for (const key of [...this.entries.keys()]) this.end(key);
    while (this.donors.length) this.dropDonor();
  }
}
