import { errorMessage } from '../core/base/errors';
import { runCli } from './program';

// The `rehearse` executable: process streams in, exit code out.
const color =
  (process.stdout.isTTY === true && !('NO_COLOR' in process.env)) || 'FORCE_COLOR' in process.env;
runCli(process.argv.slice(2), {
  out: (s) => process.stdout.write(s + '\n'),
  err: (s) => process.stderr.write(s + '\n'),
  color,
}).then(
  (code) => {
    process.exitCode = code;
  },
  // runCli answers every failure with a coded line; this is the last guard, never a stack trace.
  (err: unknown) => {
    process.stderr.write(`rehearse: ${errorMessage(err)}\n`);
    process.exitCode = 1;
  },
);
