/**
 * Environments kept open for later tasks with the same servers, per episode in flight (a run's or
 * `verify`'s {@link SharedEnvironments}); the least recently used free one closed first.
 */
export const ENVIRONMENTS_PER_SLOT = 4;

/** An environment of a {@link SharedEnvironments}: its servers' key, and whether an episode holds it. */
interface Held<E> {
  key: string;
  /** The environment once opened (and, when prefetched, started); undefined when opening failed. */
  ready: Promise<E | undefined>;
  /** The environment, once an episode has taken it. */
  env?: E;
  busy: boolean;
}

/**
 * The open environments of a run, by the servers they run (a key), shared by its episodes in
 * flight: an episode takes one that no other episode holds (servers keep state) and gives it back
 * when it ends; a later episode with the same servers takes it again (reset per episode). Bounded
 * at {@link ENVIRONMENTS_PER_SLOT} per episode in flight: when full, the least recently used one
 * that no episode holds is closed first (tasks whose servers take their own arguments, bfcl and τ²,
 * never share one, and without a bound 50 airline servers of τ² took 8 GB). `prefetch` opens and
 * starts one ahead of the episode that will need it, so that its servers start while the episodes
 * in flight wait on their policy rather than when it begins.
 */
export class SharedEnvironments<E extends { close(): Promise<void> }> {
  /** Least recently used first. */
  private held: Held<E>[] = [];
  /** Environments closed to make room, until they are gone. */
  private closing: Promise<void>[] = [];
  private readonly limit: number;

  constructor(inFlight: number) {
    if (!Number.isInteger(inFlight) || inFlight < 1)
      throw new RangeError(`environments are shared by at least one episode, not ${inFlight}`);
    this.limit = inFlight * ENVIRONMENTS_PER_SLOT;
  }

  /** Environments of `key`: held by an episode, free, or being prefetched. */
  count(key: string): number {
    return this.held.filter((h) => h.key === key).length;
  }

  /**
   * An environment of `key` that no episode holds (a prefetched one once it has started), else one
   * opened by `openNew`; it is the caller's until {@link release}. A prefetch that failed is
   * dropped, and `openNew` opens it again (so that its error is the episode's).
   */
  async acquire(key: string, openNew: () => Promise<E>): Promise<E> {
    const free = this.held.findLast((h) => h.key === key && !h.busy);
    if (free) {
      free.busy = true;
      this.touch(free);
      const env = await free.ready;
      if (env) return (free.env = env);
      this.drop(free);
    }
    while (this.held.length >= this.limit) {
      const closed = this.closeOldestFree();
      if (!closed) break;
      await closed;
    }
    const entry: Held<E> = { key, busy: true, ready: openNew() };
    this.held.push(entry);
    try {
      return (entry.env = (await entry.ready)!);
    } catch (err) {
      this.drop(entry);
      throw err;
    }
  }

  /** Gives back an environment that {@link acquire} gave: the next episode with its servers may take it. */
  release(env: E): void {
    const h = this.held.find((x) => x.busy && x.env === env);
    if (!h) return;
    h.busy = false;
    this.touch(h);
  }

  /**
   * Opens an environment of `key` and starts it (`start`: its servers) in the background, for an
   * episode that has not begun. Skipped when the bound is reached and no environment is free to
   * close; a failure is kept quiet (the episode that needs the servers opens them again).
   */
  prefetch(key: string, openNew: () => Promise<E>, start: (env: E) => Promise<void>): void {
    const room = this.held.length >= this.limit ? this.closeOldestFree() : Promise.resolve();
    if (!room) return;
    const ready = (async () => {
      await room;
      const env = await openNew();
      await start(env).catch(() => undefined);
      return env;
    })().catch(() => undefined);
    this.held.push({ key, busy: false, ready });
  }

  /** Closes every environment, whatever each close does (a failure is the caller's to ignore or not). */
  async closeAll(): Promise<PromiseSettledResult<void>[]> {
    const all = this.held;
    const closing = this.closing;
    this.held = [];
    this.closing = [];
    return Promise.allSettled([
      ...closing,
      ...all.map(async (h) => {
        await (await h.ready)?.close();
      }),
    ]);
  }

  /** Closes the least recently used environment that no episode holds; undefined when none is free. */
  private closeOldestFree(): Promise<void> | undefined {
    const oldest = this.held.find((h) => !h.busy);
    if (!oldest) return undefined;
    this.drop(oldest);
    const closed = oldest.ready.then(async (env) => {
      await env?.close();
    });
    this.closing.push(closed.catch(() => undefined));
    return closed.catch(() => undefined);
  }

  private touch(h: Held<E>): void {
    this.drop(h);
    this.held.push(h);
  }

  private drop(h: Held<E>): void {
    const at = this.held.indexOf(h);
    if (at >= 0) this.held.splice(at, 1);
  }
}
