import { errorMessage } from '../core/base/errors';
import { processStreams, terminalIO } from './io';
import { runCli } from './program';

// The `rehearse` executable: process streams in, exit code out.
const streams = processStreams();
runCli(process.argv.slice(2), streams).then(
  (code) => {
    process.exitCode = code;
  },
  // runCli answers every failure with a coded line; this is the last guard, never a stack trace.
  (err: unknown) => {
    terminalIO(streams, () => false).err(`rehearse: ${errorMessage(err)}`);
    process.exitCode = 1;
  },
);
