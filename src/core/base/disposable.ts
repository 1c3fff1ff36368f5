/** Something that holds a resource until it is disposed; shaped like VS Code's `Disposable`. */
export interface IDisposable {
  dispose(): void;
}

/** Wraps a function as a disposable. */
export function toDisposable(fn: () => void): IDisposable {
  let done = false;
  return {
    dispose: () => {
      if (!done) {
        done = true;
        fn();
      }
    },
  };
}

/**
 * Base class for objects that own other disposables. Subclasses call `_register()` for what they
 * subscribe to or create; disposing the owner disposes them in reverse order.
 */
export abstract class Disposable implements IDisposable {
  private readonly _owned: IDisposable[] = [];
  private _disposed = false;

  protected get isDisposed(): boolean {
    return this._disposed;
  }

  protected _register<T extends IDisposable>(d: T): T {
    if (this._disposed) d.dispose();
    else this._owned.push(d);
    return d;
  }

  dispose(): void {
    if (this._disposed) return;
    this._disposed = true;
    for (const d of this._owned.splice(0).reverse()) {
      try {
        d.dispose();
      } catch {
        /* one failing disposable must not keep the rest alive */
      }
    }
  }
}
