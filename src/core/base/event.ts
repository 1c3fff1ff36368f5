import type { IDisposable } from './disposable';

/** A subscribable event, shaped like VS Code's `Event<T>` so adapters can pass it straight through. */
export type Event<T> = (listener: (e: T) => void) => IDisposable;

/** Owns the listeners of one event. */
export class Emitter<T> implements IDisposable {
  private listeners = new Set<(e: T) => void>();

  readonly event: Event<T> = (listener) => {
    this.listeners.add(listener);
    return {
      dispose: () => {
        this.listeners.delete(listener);
      },
    };
  };

  fire(value: T): void {
    for (const l of [...this.listeners]) {
      try {
        l(value);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}
