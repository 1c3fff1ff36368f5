import type { StudioErrorCode } from './errorCodes';

/**
 * An error the user can cause (bad argument, unreadable file, invalid id). `code` is stable and
 * machine-readable (one of `STUDIO_ERROR_CODES`); `message` says what went wrong and what to do about it.
 */
export class StudioError extends Error {
  constructor(
    readonly code: StudioErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'StudioError';
  }
}

/** The message of any thrown value, for logs and one-line CLI errors. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
