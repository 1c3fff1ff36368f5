import type { PastTensors } from './kvCache';

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

/**
 * Idle sessions' caches, least recently used first. A request takes its session's cache out while it
 * runs (so nothing evicts what it reads, and two requests never write one cache) and puts the new
 * one back when it ends. The scheduler evicts from the least recently used end to keep the KV memory
 * within its bound.
 */
export class KvSessionCache {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  private readonly entries = new Map<string, KvSession>();
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
    for (const key of this.entries.keys()) {
      if (key === except) continue;
      this.end(key);
      return true;
    }
    return false;
  }

  clear(): void {
    for (const key of [...this.entries.keys()]) this.end(key);
  }
}
