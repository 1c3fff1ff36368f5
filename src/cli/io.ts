/** Where a command writes; tests pass buffers, the CLI passes the process streams. */
export interface CliIO {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Colour on or off for this invocation. */
  color: boolean;
}

/** Exit codes: 0 success, 1 a runtime failure (unreadable file...), 2 a usage error. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;
