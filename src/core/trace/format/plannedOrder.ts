/**
 * Puts the episodes of a streamed trace back in the run's planned order (`e1`, `e2`, ...) when
 * episodes played at once ended out of order: an ended episode is held until every episode before
 * it has gone out. Ids not of the runner's form (`e<n>`, e.g. imported traces) go out at once, and
 * at most {@link MAX_HELD} are held (past that the lowest go out), so a trace with gaps in its ids
 * costs bounded memory; `flush()` at the end of the file lets out the rest in order.
 */
export class PlannedOrder<T> {
  private readonly held = new Map<number, T>();
  private next = 1;

  constructor(private readonly release: (item: T) => void) {}

  /** An episode `episodeId` ended with `item`. */
  add(episodeId: string, item: T): void {
    const m = /^e(\d{1,9})$/.exec(episodeId);
    if (!m) {
      this.release(item);
      return;
    }
    this.held.set(Number(m[1]), item);
    this.drain();
    while (this.held.size > MAX_HELD) {
      this.next = Math.min(...this.held.keys());
      this.drain();
    }
  }

  /** Lets out everything held, in order (the end of the trace). */
  flush(): void {
    for (const n of [...this.held.keys()].sort((a, b) => a - b)) this.release(this.held.get(n)!);
    this.held.clear();
  }

  private drain(): void {
    while (this.held.has(this.next)) {
      const item = this.held.get(this.next)!;
      this.held.delete(this.next++);
      this.release(item);
    }
  }
}

/** Episodes held at most: well above the most a run plays at once (64), times private rehearsal's. */
export const MAX_HELD = 1024;
