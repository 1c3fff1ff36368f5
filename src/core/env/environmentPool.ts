/**
 * Environments kept open for later tasks with the same servers, per episode in flight (a run's
 * `SharedEnvironments`, a slot's pool in `verify`); the least recently used closed first.
 */
export const ENVIRONMENTS_PER_SLOT = 4;

/**
 * The open environments of one slot of episodes in flight, by the servers they run (a key), bounded:
 * when a task needs servers none of them runs and the pool is full, the least recently used one is
 * closed first. Tasks whose servers take the task's own arguments (bfcl, τ²) never share one, and
 * without a bound a slot kept every one alive to the end (50 airline servers of τ²: 8 GB). A slot
 * plays one episode at a time, so the environment closed is never one in use.
 */
export class EnvironmentPool<E extends { close(): Promise<void> }> {
  private readonly open = new Map<string, E>();

  constructor(private readonly limit = ENVIRONMENTS_PER_SLOT) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`an environment pool holds at least one, not ${limit}`);
  }

  /** The environment for `key`, opened by `openNew` when none is; it becomes the most recently used. */
  async get(key: string, openNew: () => Promise<E>): Promise<E> {
    let env = this.open.get(key);
    if (env) this.open.delete(key);
    else {
      const oldest = this.open.keys().next();
      if (!oldest.done && this.open.size >= this.limit) {
        const closing = this.open.get(oldest.value);
        this.open.delete(oldest.value);
        await closing?.close();
      }
      env = await openNew();
    }
    this.open.set(key, env);
    return env;
  }

  /** The environments open now, least recently used first. */
  values(): E[] {
    return [...this.open.values()];
  }

  /** Closes every environment, whatever each close does (a failure is the caller's to ignore or not). */
  async closeAll(): Promise<PromiseSettledResult<void>[]> {
    const all = this.values();
    this.open.clear();
    return Promise.allSettled(all.map((e) => e.close()));
  }
}
