import { StudioError } from '../core/base/errors';

/**
 * A loopback server's failure to listen as the coded error a user can act on (the port in use,
 * or one this user may not take); any other error as it was.
 */
export function listenError(err: unknown, port: number): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new StudioError(
      'PORT_IN_USE',
      `Port ${port} on 127.0.0.1 is in use by another program; pass another --port, or --port 0 for a free one.`,
    );
  if (code === 'EACCES')
    return new StudioError(
      'PORT_NOT_ALLOWED',
      `Port ${port} needs privileges this user lacks; pass a port above 1023, or --port 0 for a free one.`,
    );
  return err;
}
