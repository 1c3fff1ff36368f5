/**
 * An error the user can cause (bad argument, unreadable file, invalid id). `code` is stable and
 * machine-readable; `message` says what went wrong and what to do about it.
 */
export class StudioError extends Error {
  constructor(readonly code: string, message: string, readonly details?: Record<string, unknown>) {
    super(message);
    this.name = 'StudioError';
  }
}

/** The message of any thrown value, for logs and one-line CLI errors. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
